package placement

import (
	"errors"
	"net/url"
	"strings"

	"github.com/rpengine/rpengine/internal/redact"
)

// endpoint is Placement's base URL split at its query, so a request's
// path goes before the endpoint's own query (a "?token=" there must not
// swallow the path), and its shown form, which errors quote.
type endpoint struct {
	raw         string // as configured
	base, query string // base ends in "/"; query without "?"
	shown       string // base, redacted
	shownQuery  string
}

func newEndpoint(raw string) endpoint {
	base, query, _ := strings.Cut(raw, "?")
	e := endpoint{raw: raw, base: strings.TrimRight(base, "/") + "/", query: query}
	e.shown = redact.URL(e.base)
	if query != "" {
		e.shownQuery = strings.TrimPrefix(redact.URL(e.base + "?" + query)[len(redact.URL(e.base)):], "?")
	}
	return e
}

// url is the request URL of path (which may carry its own query).
func (e endpoint) url(path string) string { return join(e.base+path, e.query) }

// shownURL is url(path) as errors quote it.
func (e endpoint) shownURL(path string) string { return join(e.shown+path, e.shownQuery) }

func join(u, query string) string {
	switch {
	case query == "":
		return u
	case strings.Contains(u, "?"):
		return u + "&" + query
	}
	return u + "?" + query
}

// hide returns err with the endpoint's credentials out of its text: Go's
// HTTP client quotes the request URL (a query token in it) in its errors.
func (e endpoint) hide(err error) error {
	if err == nil || len(redact.Secrets(e.raw)) == 0 {
		return err
	}
	var ue *url.Error
	if errors.As(err, &ue) && err == error(ue) {
		c := *ue
		c.URL = redact.Text(c.URL, e.raw)
		c.Err = e.hide(c.Err)
		return &c
	}
	if s := err.Error(); redact.Text(s, e.raw) != s {
		return hiddenError{redact.Text(s, e.raw), err}
	}
	return err
}

// hiddenError is an error whose text lost a credential; it still
// unwraps to its cause, for errors.Is and errors.As.
type hiddenError struct {
	text string
	err  error
}

func (h hiddenError) Error() string { return h.text }
func (h hiddenError) Unwrap() error { return h.err }
