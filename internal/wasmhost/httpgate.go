package wasmhost

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpengine/rpengine/hostabi"
)

// maxHTTPRequest bounds the request frame a guest may hand the host.
const maxHTTPRequest = 16 << 20

// gate performs the HTTP requests of one plugin. It is the only door out
// of the sandbox: it resolves service names to granted endpoints, adds the
// credentials, follows no redirect, caps the body it reads and honours the
// caller's deadline. It runs in the engine process, never in the child.
type gate struct {
	services map[string]*url.URL
	creds    map[string]Credential
	client   *http.Client
	maxBody  int64
	log      *slog.Logger
	raw      bool // Options.RawBodies
	// keep holds the projections kept for the operation running, if it
	// offered answers by reference (refs.go); nil otherwise.
	keep atomic.Pointer[keptFrames]
}

func newGate(o Options) (*gate, error) {
	g := &gate{services: map[string]*url.URL{}, creds: map[string]Credential{}, maxBody: o.MaxHTTPResponse, log: o.Logger, raw: o.RawBodies}
	for name, endpoint := range o.Services {
		u, err := url.Parse(endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("service %q: endpoint %q is not an http(s) URL", name, endpoint)
		}
		g.services[name] = u
		switch c, ok := o.Credentials[name]; {
		case ok && c != nil:
			g.creds[name] = c
		case !ok && o.AuthHeader != nil:
			g.creds[name] = headerCredential{name, o.AuthHeader}
		}
	}
	for name := range o.Credentials {
		if _, ok := g.services[name]; !ok {
			return nil, fmt.Errorf("credential for service %q, which is not granted", name)
		}
	}
	c := *o.HTTPClient
	// A redirect could carry the token to another host; the plugin gets
	// the 3xx and may ask again through a granted service.
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	g.client = &c
	return g, nil
}

// do answers one request frame with a response frame; failures travel in
// the response head, so the guest sees them as errors from guest.HTTP.
func (g *gate) do(ctx context.Context, frame []byte) []byte {
	head, buf, err := g.roundTrip(ctx, frame)
	if err != nil {
		head, buf = hostabi.HTTPResponseHead{Error: err.Error()}, nil
	}
	raw, _ := json.Marshal(head)
	if head.Projected {
		raw = alignedHead(raw)
	}
	if len(buf) >= headRoom && 4+len(raw) <= headRoom { // the head fits before the body: no copy of it
		start := headRoom - 4 - len(raw)
		binary.LittleEndian.PutUint32(buf[start:], uint32(len(raw)))
		copy(buf[start+4:], raw)
		return buf[start:]
	}
	var body []byte
	if len(buf) >= headRoom {
		body = buf[headRoom:]
	}
	return hostabi.AppendFrame(make([]byte, 0, 4+len(raw)+len(body)), raw, body)
}

// headRoom is what a response body is read after, so that the frame's
// head can be written in front of it: a listing's pages are then never
// copied again in the engine.
const headRoom = 4 << 10

// readBody reads r to its end into a buffer that starts with headRoom
// free bytes. size is the body's announced length (-1 if unknown, as for
// a chunked body); limit caps what is read (r reads at most limit+1). A
// body of unknown length is read in chunks and copied once into a buffer
// of its size, rather than into one grown by doubling, which copied and
// cleared a 600 KB page about twice over.
func readBody(r io.Reader, size, limit int64) ([]byte, error) {
	if size >= 0 && size <= limit {
		b := bodyBuffer(headRoom + int(size) + 1) // +1: EOF is seen without growing
		n, err := io.ReadFull(r, b[headRoom:])
		if err == io.ErrUnexpectedEOF || err == io.EOF {
			err = nil
		}
		if err != nil || n < len(b)-headRoom {
			return b[:headRoom+n], err
		}
		// The body is longer than announced: keep reading as below.
		rest, err := readBody(r, -1, limit)
		return append(b, rest[headRoom:]...), err
	}
	const chunk = 64 << 10
	var chunks [][]byte
	total := 0
	for {
		c := make([]byte, chunk)
		n, err := io.ReadFull(r, c)
		chunks, total = append(chunks, c[:n]), total+n
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	b := make([]byte, headRoom, headRoom+total)
	for _, c := range chunks {
		b = append(b, c...)
	}
	return b, nil
}

// bodies holds buffers of bodies the gate projected, which nothing
// references once their frame is made: a listing's next page reuses one
// rather than allocating and clearing another of the same size.
var bodies sync.Pool

func bodyBuffer(n int) []byte {
	if p, _ := bodies.Get().(*[]byte); p != nil && cap(*p) >= n {
		return (*p)[:n]
	}
	return make([]byte, n)
}

func releaseBody(b []byte) { bodies.Put(&b) }

func (g *gate) roundTrip(ctx context.Context, frame []byte) (hostabi.HTTPResponseHead, []byte, error) {
	var none hostabi.HTTPResponseHead
	rawHead, body, err := hostabi.SplitFrame(frame)
	if err != nil {
		return none, nil, fmt.Errorf("malformed request frame: %w", err)
	}
	var h hostabi.HTTPRequestHead
	if err := json.Unmarshal(rawHead, &h); err != nil {
		return none, nil, fmt.Errorf("malformed request head: %w", err)
	}
	proj, keep, err := g.requestedProjection(h)
	if err != nil {
		return none, nil, err
	}
	target, err := g.resolve(h.Service, h.Path)
	if err != nil {
		return none, nil, err
	}
	cred := g.creds[h.Service]
	// got is the response body after headRoom bytes for the frame's head.
	req, resp, got, err := g.send(ctx, h, target, body, cred)
	if err != nil {
		return none, nil, g.unaddressed(h.Service, err)
	}
	// One retry after a renewal: a token revoked or a session expired
	// costs the plugin nothing; a credential the service keeps refusing
	// reaches the plugin as the service's answer.
	if cred != nil && cred.Rejected(resp.StatusCode, resp.Header, got[headRoom:]) {
		if rerr := cred.Renew(ctx, req); rerr != nil {
			g.log.Warn("renewing the credential failed; the plugin gets the refusal", "service", h.Service, "err", rerr)
		} else if _, resp, got, err = g.send(ctx, h, target, body, cred); err != nil {
			return none, nil, g.unaddressed(h.Service, err)
		}
	}
	out := hostabi.HTTPResponseHead{Status: resp.StatusCode, Header: make(map[string]string, len(resp.Header))}
	for _, k := range sessionHeaders {
		resp.Header.Del(k)
	}
	for k, vs := range resp.Header {
		out.Header[k] = strings.Join(vs, ", ")
	}
	if proj != nil && resp.StatusCode/100 == 2 {
		body := got
		if got, out.Ref, err = g.projectKeeping(ctx, got, proj, keep); err != nil {
			return none, nil, err
		}
		releaseBody(body)
		out.Projected = true
	}
	return out, got, nil
}

// send makes one attempt: the plugin's headers less any credential, the
// host's credential, the body read under the cap.
func (g *gate) send(ctx context.Context, h hostabi.HTTPRequestHead, target string, body []byte, cred Credential) (*http.Request, *http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, h.Method, target, bytes.NewReader(body))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("bad request: %w", err)
	}
	for k, v := range h.Header {
		req.Header.Set(k, v)
	}
	for _, k := range credentialHeaders {
		req.Header.Del(k)
	}
	if cred != nil {
		if err := cred.Apply(ctx, req); err != nil {
			return nil, nil, nil, fmt.Errorf("the host could not authenticate to %s: %w", h.Service, g.describe(ctx, err))
		}
	}
	resp, err := g.client.Do(req)
	if err != nil {
		return nil, nil, nil, g.describe(ctx, err)
	}
	defer resp.Body.Close()
	got, err := readBody(io.LimitReader(resp.Body, g.maxBody+1), resp.ContentLength, g.maxBody)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("read response body: %w", g.describe(ctx, err))
	}
	if int64(len(got)-headRoom) > g.maxBody {
		return nil, nil, nil, fmt.Errorf("response body exceeds the %d-byte cap (max_http_response)", g.maxBody)
	}
	return req, resp, got, nil
}

// resolve maps a service name and a relative path to a URL under the
// service's endpoint, refusing anything not granted or escaping it.
func (g *gate) resolve(service, rel string) (string, error) {
	base, ok := g.services[service]
	if !ok {
		granted := make([]string, 0, len(g.services))
		for name := range g.services {
			granted = append(granted, name)
		}
		slices.Sort(granted)
		return "", fmt.Errorf("service %q is not granted (granted in [plugin.services]: %s)", service, grantedList(granted))
	}
	if !strings.HasPrefix(rel, "/") {
		return "", fmt.Errorf("path %q must start with /", rel)
	}
	// The path joins the endpoint's path; the endpoint's query (a
	// ?token=) goes after it, with the request's own: appended to the
	// whole URL, it swallowed the path.
	noQuery := *base
	noQuery.RawQuery, noQuery.Fragment = "", ""
	u, err := url.Parse(strings.TrimSuffix(noQuery.String(), "/") + rel)
	if err != nil {
		return "", fmt.Errorf("path %q: %w", rel, err)
	}
	if base.RawQuery != "" {
		u.RawQuery = strings.TrimSuffix(base.RawQuery+"&"+u.RawQuery, "&")
	}
	prefix := strings.TrimSuffix(base.Path, "/") + "/"
	if u.Scheme != base.Scheme || u.Host != base.Host || !strings.HasPrefix(path.Clean(u.Path)+"/", prefix) {
		return "", fmt.Errorf("path %q leaves the %s endpoint", rel, service)
	}
	return u.String(), nil
}

func grantedList(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// describe names a deadline as such: the guest should know it ran out of
// time rather than see a bare "context deadline exceeded".
func (g *gate) describe(ctx context.Context, err error) error {
	err = unnamed(err)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		if d, ok := ctx.Deadline(); ok {
			return fmt.Errorf("the call's deadline (%s) passed: %w", d.Format(time.RFC3339Nano), err)
		}
	}
	return err
}

// unnamed drops the URL a net/http error prints (it may carry userinfo)
// and the address a network error names (ABI §6: a plugin never sees
// where a service is): "dial tcp 10.0.0.5:6385: connect: connection
// refused" becomes "dial: connect: connection refused".
func unnamed(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var dns *net.DNSError
	var op *net.OpError
	var host x509.HostnameError
	switch {
	case errors.As(err, &dns):
		return fmt.Errorf("name lookup failed: %s", dns.Err)
	case errors.As(err, &host):
		return errors.New("tls: the service's certificate is not valid for its host name")
	case errors.As(err, &op) && op.Err != nil:
		return fmt.Errorf("%s: %w", op.Op, unnamed(op.Err))
	}
	return err
}

// unaddressed is err as the plugin may see it: any address of service's
// endpoint an error text still carries is replaced by the service's name.
func (g *gate) unaddressed(service string, err error) error {
	base, ok := g.services[service]
	if !ok || base.Host == "" {
		return err
	}
	msg := err.Error()
	out := strings.NewReplacer(base.String(), "<"+service+">", base.Host, "<"+service+">", base.Hostname(), "<"+service+">").Replace(msg)
	if out == msg {
		return err
	}
	return errors.New(out)
}

// errorResponse is a response frame carrying only an error.
func errorResponse(format string, args ...any) []byte {
	raw, _ := json.Marshal(hostabi.HTTPResponseHead{Error: fmt.Sprintf(format, args...)})
	return hostabi.AppendFrame(nil, raw, nil)
}
