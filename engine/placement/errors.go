package placement

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
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

// APIError is an error answer from Placement.
type APIError struct {
	Method, URL string
	Status      int
	Code        string
	Detail      string
	RequestID   string
}

// Error names the request, Placement's answer and its request id.
func (e *APIError) Error() string {
	return fmt.Sprintf("%s %s: %d %s: %s (request %s)", e.Method, e.URL, e.Status, e.Code, e.Detail, e.RequestID)
}

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

func decodeAPIError(method, url string, status int, h http.Header, body []byte) *APIError {
	e := &APIError{Method: method, URL: url, Status: status, RequestID: requestID(h)}
	var doc struct {
		Errors []struct {
			Code      string `json:"code"`
			Detail    string `json:"detail"`
			RequestID string `json:"request_id"`
		} `json:"errors"`
	}
	if json.Unmarshal(body, &doc) == nil && len(doc.Errors) > 0 {
		e.Code, e.Detail = doc.Errors[0].Code, doc.Errors[0].Detail
		if e.RequestID == "" {
			e.RequestID = doc.Errors[0].RequestID
		}
	} else {
		e.Detail = truncate(string(body), 512)
	}
	return e
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// requestID reads the id Placement gives each request (the real server
// sends x-openstack-request-id; newer WSGI stacks openstack-request-id).
func requestID(h http.Header) string {
	if id := h.Get("X-Openstack-Request-Id"); id != "" {
		return id
	}
	return h.Get("Openstack-Request-Id")
}
