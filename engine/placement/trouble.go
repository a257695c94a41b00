package placement

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Trouble is the run of failed requests under way: requests that got no
// answer (refused, reset, timed out) or a 5xx, in a row, with no answer
// in between. The zero value means the last request was answered.
type Trouble struct {
	Failures int       // failed requests in a row
	Since    time.Time // the first of them
	Last     string    // the last one's error, cut short
}

// trouble tracks the client's Trouble from its transport.
type trouble struct {
	mu  sync.Mutex
	now Trouble
}

func (t *trouble) observe(status int, err error) {
	if errors.Is(err, context.Canceled) { // the engine gave up, not Placement
		return
	}
	if err == nil && status < 500 {
		t.mu.Lock()
		t.now = Trouble{}
		t.mu.Unlock()
		return
	}
	what := ""
	if err != nil {
		what = shortError(err.Error())
	} else {
		what = "answered " + statusText(status)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.now.Failures == 0 {
		t.now.Since = time.Now()
	}
	t.now.Failures++
	t.now.Last = what
}

// Trouble is the run of failed requests under way (zero: none).
func (c *Client) Trouble() Trouble {
	c.trouble.mu.Lock()
	defer c.trouble.mu.Unlock()
	return c.trouble.now
}

func statusText(status int) string {
	switch status {
	case 502:
		return "502 Bad Gateway"
	case 503:
		return "503 Service Unavailable"
	case 504:
		return "504 Gateway Timeout"
	}
	return "HTTP " + itoa(status)
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for ; n > 0; n /= 10 {
		i--
		b[i] = byte('0' + n%10)
	}
	return string(b[i:])
}

// shortError bounds an error's text: a transport error quotes a URL.
func shortError(s string) string {
	const n = 300
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
