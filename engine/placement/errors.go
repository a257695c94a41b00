package placement

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Sentinels for the conditions a caller must branch on; test with
// errors.Is against an error from this package.
var (
	ErrConcurrentUpdate = errors.New("placement.concurrent_update")
	ErrDuplicateName    = errors.New("placement.duplicate_name")
	ErrProviderInUse    = errors.New("placement.resource_provider.inuse")
	ErrInventoryInUse   = errors.New("placement.inventory.inuse")
	ErrNotFound         = errors.New("not found")
)

// APIError is an error answer from Placement, or from a proxy in front
// of it (then Code is empty and Detail holds the start of its page).
type APIError struct {
	Method, URL string
	Status      int
	Code        string
	Title       string
	Detail      string
	RequestID   string
	// GlobalRequestID is the cycle's X-OpenStack-Request-ID, if it sent one.
	GlobalRequestID string
}

// Error names everything the answer gave, so a log line alone lets an
// operator find the request in Placement's log.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %d", e.Method, e.URL, e.Status)
	title := e.Title
	if title == "" {
		title = http.StatusText(e.Status)
	}
	if title != "" {
		b.WriteString(" " + title)
	}
	if e.Code != "" {
		b.WriteString(" (" + e.Code + ")")
	}
	if e.Detail != "" {
		b.WriteString(": " + e.Detail)
	}
	b.WriteString(e.IDs())
	return b.String()
}

// IDs names the request for a message that does not quote the whole
// error: " [request <Placement's id>, global <the cycle's id>]".
func (e *APIError) IDs() string { return idText(e.RequestID, e.GlobalRequestID) }

// Is maps the error code (microversion 1.23+) onto the sentinels.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.Status == http.StatusNotFound
	case ErrConcurrentUpdate, ErrDuplicateName, ErrProviderInUse, ErrInventoryInUse:
		return e.Code == target.Error()
	}
	return false
}

// maxDetail bounds the detail kept from an answer (a proxy's HTML page).
const maxDetail = 512

func decodeAPIError(method, url string, status int, h http.Header, body []byte) *APIError {
	e := &APIError{Method: method, URL: url, Status: status, RequestID: requestID(h)}
	var doc struct {
		Errors []struct {
			Code      string `json:"code"`
			Title     string `json:"title"`
			Detail    string `json:"detail"`
			RequestID string `json:"request_id"`
		} `json:"errors"`
	}
	if json.Unmarshal(body, &doc) == nil && len(doc.Errors) > 0 {
		first := doc.Errors[0]
		e.Code, e.Title = clean(first.Code, 128), clean(first.Title, 128)
		e.Detail = clean(first.Detail, maxDetail)
		if e.RequestID == "" {
			e.RequestID = clean(first.RequestID, maxRequestID)
		}
		return e
	}
	e.Detail = clean(pageText(body), maxDetail)
	return e
}

// pageText is what a non-JSON answer says: an HTML page's title (nginx,
// haproxy and Apache name the error there), else the text itself.
func pageText(body []byte) string {
	s := string(body[:min(len(body), 8<<10)])
	lower := strings.ToLower(s)
	if i := strings.Index(lower, "<title>"); i >= 0 {
		if j := strings.Index(lower[i:], "</title>"); j > 0 {
			return s[i+len("<title>") : i+j]
		}
	}
	return s
}

// clean makes outside text one bounded, printable line: Placement's
// details carry webob's blank lines, proxies send pages.
func clean(s string, n int) string {
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "?")), " ")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
	return truncate(s, n)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
