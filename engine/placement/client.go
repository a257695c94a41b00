package placement

import (
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gophercloud/gophercloud/v2"
)

// Microversions: MinVersion is what the engine needs (1.26: reserved may
// equal total; it also implies 1.20 POST bodies and 1.23 error codes);
// WantVersion is the newest it knows.
const (
	MinVersion  = "1.26"
	WantVersion = "1.39"
)

// Config's defaults, and the [placement] keys' (internal/config uses them).
const (
	DefaultTimeout  = 30 * time.Second // one request
	DefaultMaxConns = 8                // per host
)

// Config says where Placement is and how to reach it.
type Config struct {
	Endpoint string
	// Token is sent as X-Auth-Token (noauth2 takes "admin"). Ignored
	// when Provider is set.
	Token string
	// Provider, if set, is an authenticated gophercloud client (Keystone).
	Provider *gophercloud.ProviderClient
	// TLS, if set, replaces the system's TLS settings (e.g. a private CA).
	TLS *tls.Config
	// Timeout bounds one request; MaxConns caps connections per host.
	Timeout  time.Duration
	MaxConns int
	// Observe, if set, is told about every request: for metrics.
	Observe func(method string, status int, d time.Duration)
	// Logger, if set, gets one debug line per request with its request id.
	Logger *slog.Logger
	// Microversion, if set, is a version negotiated earlier with this
	// Placement (kept in the state file): New then sends no discovery
	// request. If Placement refuses it, Stale turns true and Renegotiate
	// asks again.
	Microversion string
	// Retry bounds the retries of failed reads and guarded writes.
	Retry Retry
	// Transport, if set, replaces the network (tests serve a handler
	// in-process, so testing/synctest can run the backoff).
	Transport http.RoundTripper
	// MaxResponse caps one answer's body in bytes (0: DefaultMaxResponse);
	// MaxProviders one listing's providers (0: DefaultMaxProviders).
	MaxResponse  int64
	MaxProviders int
}

// Client talks to one Placement. It is safe for concurrent use.
type Client struct {
	sc       *gophercloud.ServiceClient
	requests atomic.Int64
	taken    atomic.Int64 // requests counted by TakeRequests
	retries  atomic.Int64
	retry    Retry
	log      *slog.Logger
	maxBody  int64
	maxList  int
	ep       endpoint // the endpoint, and as errors quote it (endpoint.go)
	shown    string   // ep.shown

	trouble trouble // failed requests in a row (trouble.go)

	cached bool        // the microversion came from Config, not discovery
	stale  atomic.Bool // Placement refused the cached microversion
}

// New connects to Placement and negotiates the microversion. A server
// older than MinVersion is refused.
func New(ctx context.Context, cfg Config) (*Client, error) {
	c := &Client{retry: cfg.Retry.withDefaults(), log: cfg.Logger}
	c.maxBody, c.maxList = cmp.Or(max(cfg.MaxResponse, 0), DefaultMaxResponse), cmp.Or(max(cfg.MaxProviders, 0), DefaultMaxProviders)
	pc := cfg.Provider
	if pc == nil {
		pc = &gophercloud.ProviderClient{TokenID: cfg.Token}
	}
	maxConns := cfg.MaxConns
	if maxConns <= 0 {
		maxConns = DefaultMaxConns
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.MaxConnsPerHost, base.MaxIdleConnsPerHost = maxConns, maxConns
	if cfg.TLS != nil {
		base.TLSClientConfig = cfg.TLS
	}
	var next http.RoundTripper = base
	if cfg.Transport != nil {
		next = cfg.Transport
	}
	pc.HTTPClient = http.Client{Timeout: timeout, Transport: observing{next, &c.requests, cfg.Observe, cfg.Logger, &c.trouble}}
	c.sc = &gophercloud.ServiceClient{
		ProviderClient: pc,
		Endpoint:       newEndpoint(cfg.Endpoint).base,
		Type:           "placement",
	}
	c.ep = newEndpoint(cfg.Endpoint)
	c.shown = c.ep.shown
	if v := cfg.Microversion; v != "" && !less(v, MinVersion) && !less(WantVersion, v) {
		c.sc.Microversion, c.cached = v, true
		return c, nil
	}
	return c, c.Renegotiate(ctx)
}

// Stale reports that Placement refused the cached microversion (406): call
// Renegotiate before the next batch of requests.
func (c *Client) Stale() bool { return c.stale.Load() }

// Renegotiate discovers the microversion again. Not safe while other
// requests are in flight.
func (c *Client) Renegotiate(ctx context.Context) error {
	c.sc.Microversion = ""
	v, err := c.negotiate(ctx)
	if err != nil {
		return err
	}
	c.sc.Microversion, c.cached = v, false
	c.stale.Store(false)
	return nil
}

// Microversion is the version every request carries.
func (c *Client) Microversion() string { return c.sc.Microversion }

// Requests counts HTTP requests sent so far, retries included.
func (c *Client) Requests() int64 { return c.requests.Load() }

// TakeRequests returns the requests sent since it was last called (since
// New the first time, so the discovery request is counted once).
func (c *Client) TakeRequests() int64 {
	now := c.requests.Load()
	return now - c.taken.Swap(now)
}

func (c *Client) negotiate(ctx context.Context) (string, error) {
	var doc struct {
		Versions []struct {
			ID         string `json:"id"`
			MaxVersion string `json:"max_version"`
		} `json:"versions"`
	}
	if err := c.do(ctx, "GET", "", nil, &doc, 200); err != nil {
		return "", fmt.Errorf("placement version discovery at %s: %w", c.shown, err)
	}
	for _, v := range doc.Versions {
		if v.ID != "v1.0" {
			continue
		}
		if less(v.MaxVersion, MinVersion) {
			return "", fmt.Errorf("placement at %s supports microversions up to %s; this engine needs at least %s",
				c.shown, v.MaxVersion, MinVersion)
		}
		if less(v.MaxVersion, WantVersion) {
			return v.MaxVersion, nil
		}
		return WantVersion, nil
	}
	return "", fmt.Errorf("placement at %s: no v1.0 API in the version document", c.shown)
}

// less compares "1.26"-style microversions.
func less(a, b string) bool {
	var am, an, bm, bn int
	fmt.Sscanf(a, "%d.%d", &am, &an)
	fmt.Sscanf(b, "%d.%d", &bm, &bn)
	return am < bm || am == bm && an < bn
}

// do sends one request, retrying it as c.retry allows. out may be nil;
// ok lists the accepted statuses.
func (c *Client) do(ctx context.Context, method, path string, in, out any, ok ...int) error {
	for attempt := 1; ; attempt++ {
		err := c.doOnce(ctx, method, path, in, out, ok)
		if err == nil || attempt >= c.retry.Attempts || !retryable(ctx, method, path, err) {
			return err
		}
		c.retries.Add(1)
		wait := c.retry.backoff(attempt)
		if c.log != nil {
			c.log.Debug("placement request retried", "err", err, "attempt", attempt+1, "after_ms", wait.Milliseconds())
		}
		if Sleep(ctx, wait) != nil {
			return err
		}
	}
}

func (c *Client) doOnce(ctx context.Context, method, path string, in, out any, ok []int) error {
	u := c.ep.url(path)
	shown := c.ep.shownURL(path) // what errors quote: no credential
	opts := &gophercloud.RequestOpts{JSONBody: in, OkCodes: ok}
	if out != nil {
		opts.KeepResponseBody = true
	}
	if in == nil && (method == "PUT" || method == "POST") {
		opts.OmitHeaders = []string{"Content-Type"}
	}
	if c.sc.Microversion == "" {
		opts.OmitHeaders = append(opts.OmitHeaders, "OpenStack-API-Version")
	}
	resp, err := c.sc.Request(ctx, method, u, opts)
	if err != nil {
		var ue gophercloud.ErrUnexpectedResponseCode
		if errors.As(err, &ue) {
			if ue.Actual == http.StatusNotAcceptable && c.cached {
				c.stale.Store(true)
			}
			e := decodeAPIError(method, shown, ue.Actual, ue.ResponseHeader, ue.Body)
			e.GlobalRequestID = GlobalRequestID(ctx)
			return e
		}
		if g := GlobalRequestID(ctx); g != "" {
			// No answer, but Placement may have logged the request.
			return fmt.Errorf("%s %s: %w [global %s]", method, shown, c.ep.hide(err), g)
		}
		return fmt.Errorf("%s %s: %w", method, shown, c.ep.hide(err))
	}
	defer func() {
		io.CopyN(io.Discard, resp.Body, maxDrain) // drained bodies let the connection be reused
		resp.Body.Close()
	}()
	if out == nil {
		return nil
	}
	if resp.ContentLength > c.maxBody {
		return fmt.Errorf("%s %s: %w", method, shown, tooLarge(c.maxBody))
	}
	body := capBody(resp.Body, c.maxBody)
	if d, ok := out.(interface{ decodeFrom(io.Reader) error }); ok {
		err = d.decodeFrom(body)
	} else {
		err = json.NewDecoder(body).Decode(out)
	}
	if big := (errTooLarge{}); errors.As(err, &big) {
		return fmt.Errorf("%s %s: %w", method, shown, big)
	}
	if err != nil {
		return fmt.Errorf("%s %s: malformed answer: %w", method, shown, c.ep.hide(err))
	}
	return nil
}

// observing counts requests and reports their outcome and latency.
type observing struct {
	next    http.RoundTripper
	n       *atomic.Int64
	observe func(method string, status int, d time.Duration)
	log     *slog.Logger
	trouble *trouble
}

func (t observing) RoundTrip(r *http.Request) (*http.Response, error) {
	t.n.Add(1)
	start := time.Now()
	if id := GlobalRequestID(r.Context()); id != "" {
		r = r.Clone(r.Context())
		r.Header.Set("X-OpenStack-Request-ID", id)
	}
	resp, err := t.next.RoundTrip(r)
	status := 0 // transport failure
	if err == nil {
		status = resp.StatusCode
		noteAnswer(r.Context(), resp.Header)
		if status >= 400 {
			// gophercloud reads an error body whole: a proxy's page or a
			// hostile answer must not cost unbounded memory.
			resp.Body = limitedBody{io.LimitReader(resp.Body, maxErrorBody), resp.Body}
		}
	} else {
		err = &transportError{err}
	}
	t.trouble.observe(status, err)
	if t.observe != nil {
		t.observe(r.Method, status, time.Since(start))
	}
	if t.log != nil && t.log.Enabled(r.Context(), slog.LevelDebug) {
		id := ""
		if resp != nil {
			id = requestID(resp.Header)
		}
		t.log.Debug("placement request", "method", r.Method, "path", r.URL.Path,
			"status", status, "request_id", id, "global_request_id", GlobalRequestID(r.Context()),
			"ms", time.Since(start).Milliseconds())
	}
	return resp, err
}

// maxErrorBody bounds what is read of an error answer; Placement's own
// are under 1 KiB.
const maxErrorBody = 64 << 10

type limitedBody struct {
	io.Reader
	io.Closer
}

// EnsureResourceClass creates a custom resource class (an existing one
// is no error). The engine calls it once per name (engine/names.go).
func (c *Client) EnsureResourceClass(ctx context.Context, name string) error {
	return c.do(ctx, "PUT", "resource_classes/"+url.PathEscape(name), nil, nil, 201, 204)
}

// EnsureTrait creates a custom trait (an existing one is no error).
func (c *Client) EnsureTrait(ctx context.Context, name string) error {
	if !strings.HasPrefix(name, "CUSTOM_") {
		return nil // standard traits exist already; an unknown one fails the PUT visibly
	}
	return c.do(ctx, "PUT", "traits/"+url.PathEscape(name), nil, nil, 201, 204)
}

// UnknownTraits returns the names Placement does not know, in one
// request (GET /traits?name=in:...).
func (c *Client) UnknownTraits(ctx context.Context, names []string) ([]string, error) {
	if len(names) == 0 {
		return nil, nil
	}
	var out struct {
		Traits []string `json:"traits"`
	}
	if err := c.do(ctx, "GET", "traits?name=in:"+strings.Join(names, ","), nil, &out, 200); err != nil {
		return nil, fmt.Errorf("look up traits: %w", err)
	}
	var unknown []string
	for _, n := range names {
		if !slices.Contains(out.Traits, n) {
			unknown = append(unknown, n)
		}
	}
	return unknown, nil
}
