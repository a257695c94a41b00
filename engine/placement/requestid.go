package placement

import (
	"context"
	"net/http"
	"sync/atomic"
)

// maxRequestID bounds a request id read from an answer: Placement's are
// 40 bytes ("req-<uuid>"); a proxy's header must not fill a log line.
const maxRequestID = 64

// requestID reads the id Placement gives each request (the real server
// sends x-openstack-request-id; newer WSGI stacks openstack-request-id),
// as one bounded printable word.
func requestID(h http.Header) string {
	id := h.Get("X-Openstack-Request-Id")
	if id == "" {
		id = h.Get("Openstack-Request-Id")
	}
	if plainWord(id) {
		return id // Placement's own: kept as it is, no copy
	}
	return clean(id, maxRequestID)
}

// plainWord says whether s is short printable ASCII without spaces.
func plainWord(s string) bool {
	if len(s) > maxRequestID {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// answerIDKey carries an *AnswerID in a context.
type answerIDKey struct{}

// AnswerID keeps the request id Placement gave the last answer to a
// request made with its context: a write's log record names it beside
// the cycle's global request id, so the write can be found in
// Placement's log.
type AnswerID struct{ last atomic.Pointer[string] }

// WithAnswerID returns a context whose requests record their answer's
// request id in the returned AnswerID.
func WithAnswerID(ctx context.Context) (context.Context, *AnswerID) {
	a := &AnswerID{}
	return context.WithValue(ctx, answerIDKey{}, a), a
}

// Last is the request id of the last answer, or "" (none yet, or the
// answer had none).
func (a *AnswerID) Last() string {
	if p := a.last.Load(); p != nil {
		return *p
	}
	return ""
}

// noteAnswer records h's request id where ctx asks for it.
func noteAnswer(ctx context.Context, h http.Header) {
	if a, ok := ctx.Value(answerIDKey{}).(*AnswerID); ok {
		id := requestID(h)
		a.last.Store(&id)
	}
}

// idText is how an error names the request: Placement's id (or that
// there was none) and the cycle's global id when there is one.
func idText(id, global string) string {
	s := "no request id"
	if id != "" {
		s = "request " + id
	}
	if global != "" {
		s += ", global " + global
	}
	return " [" + s + "]"
}
