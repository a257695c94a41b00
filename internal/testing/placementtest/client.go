package placementtest

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// client is the contract suite's raw HTTP client. Each request sets the
// token "admin", microversion 1.39 and a JSON content type unless the
// caller overrides them.
type client struct {
	base string
	hc   *http.Client
}

// header overrides one request header; an empty value removes it.
type header struct{ key, value string }

func version(v string) header { return header{"OpenStack-API-Version", "placement " + v} }

var noToken = header{"X-Auth-Token", ""}

type reply struct {
	status int
	header http.Header
	body   []byte
	what   string // "PUT /path", for messages
}

func (c *client) do(t *testing.T, method, path string, body any, hs ...header) reply {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatalf("encode body for %s %s: %v", method, path, err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	req.Header.Set("X-Auth-Token", "admin")
	req.Header.Set("OpenStack-API-Version", "placement 1.39")
	req.Header.Set("Accept", "application/json")
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range hs {
		req.Header.Del(h.key)
		if h.value != "" {
			req.Header.Set(h.key, h.value)
		}
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: raw, what: method + " " + path}
}

// expect fails the test unless the status is one of want.
func (r reply) expect(t *testing.T, want ...int) reply {
	t.Helper()
	if !slices.Contains(want, r.status) {
		t.Fatalf("%s: status %d, want %v; body: %s", r.what, r.status, want, r.body)
	}
	return r
}

// object decodes the body, keeping numbers as json.Number so generations
// stay exact whatever their size.
func (r reply) object(t *testing.T) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("%s: body is not a JSON object: %v: %s", r.what, err, r.body)
	}
	return m
}

// gen reads a generation and checks that it is a JSON integer.
func (r reply) gen(t *testing.T, key string) json.Number {
	t.Helper()
	n, ok := r.object(t)[key].(json.Number)
	if !ok {
		t.Fatalf("%s: %q is not a number: %s", r.what, key, r.body)
	}
	if _, err := n.Int64(); err != nil {
		t.Fatalf("%s: %q = %s is not an integer: %v", r.what, key, n, err)
	}
	return n
}

var requestID = regexp.MustCompile(`^req-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// apiError checks the real error shape and returns its one entry:
// {"errors": [{"status", "title", "detail", "code", "request_id"}]}, where
// code exists only from 1.23 and request_id equals x-openstack-request-id.
func (r reply) apiError(t *testing.T, status int, code string) map[string]any {
	t.Helper()
	r.expect(t, status)
	errs, ok := r.object(t)["errors"].([]any)
	if !ok || len(errs) != 1 {
		t.Fatalf("%s: want one entry in errors: %s", r.what, r.body)
	}
	e, _ := errs[0].(map[string]any)
	keys := []string{"detail", "request_id", "status", "title"}
	if code != "" {
		keys = append(keys, "code")
	}
	got := make([]string, 0, len(e))
	for k := range e {
		got = append(got, k)
	}
	slices.Sort(got)
	slices.Sort(keys)
	if !slices.Equal(got, keys) {
		t.Errorf("%s: error keys %v, want %v", r.what, got, keys)
	}
	if e["status"] != json.Number(fmt.Sprint(status)) || e["title"] != http.StatusText(status) {
		t.Errorf("%s: status/title %v/%v, want %d/%s", r.what, e["status"], e["title"], status, http.StatusText(status))
	}
	if code != "" && e["code"] != code {
		t.Errorf("%s: code %v, want %s; body %s", r.what, e["code"], code, r.body)
	}
	id := r.header.Get("X-Openstack-Request-Id")
	if !requestID.MatchString(id) || e["request_id"] != id {
		t.Errorf("%s: request_id %v, header x-openstack-request-id %q", r.what, e["request_id"], id)
	}
	return e
}

// detail returns the error detail text.
func (r reply) detail(t *testing.T) string {
	t.Helper()
	errs, _ := r.object(t)["errors"].([]any)
	if len(errs) == 0 {
		t.Fatalf("%s: no errors in body: %s", r.what, r.body)
	}
	d, _ := errs[0].(map[string]any)["detail"].(string)
	return d
}

func newClient(base string) *client {
	return &client{base: strings.TrimSuffix(base, "/"), hc: &http.Client{Timeout: 30 * time.Second}}
}

// uniq returns a random lower-case hex string of n bytes.
func uniq(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func newUUID() string {
	h := uniq(16)
	return h[0:8] + "-" + h[8:12] + "-4" + h[13:16] + "-a" + h[17:20] + "-" + h[20:]
}

// customName makes a unique CUSTOM_ name for a class or trait.
func customName(what string) string {
	return "CUSTOM_CONTRACT_" + what + "_" + strings.ToUpper(uniq(6))
}
