package coord

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// kubeAPI is a small REST client for the two kinds the Kubernetes backend
// uses, Leases and ConfigMaps, in one namespace. client-go would bring
// some thirty modules into the engine's build for six calls; these are
// plain JSON over HTTPS with resourceVersion preconditions.
type kubeAPI struct {
	base      string // https://host:port, no trailing slash
	namespace string
	token     func() (string, error)
	hc        *http.Client

	requests atomic.Int64 // sent, for the requests-per-cycle figure
}

// errNotFound and errConflict are the answers a caller branches on: 404,
// and 409 (a resourceVersion precondition failed, or the name exists).
var (
	errNotFound = errors.New("not found")
	errConflict = errors.New("conflict")
)

// apiError is any other answer than 2xx, with the server's message.
type apiError struct {
	method, path string
	code         int
	msg          string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("kubernetes %s %s: %d %s", e.method, e.path, e.code, e.msg)
}

func (e *apiError) Unwrap() error {
	switch e.code {
	case http.StatusNotFound:
		return errNotFound
	case http.StatusConflict:
		return errConflict
	}
	return nil
}

// kinds' collection paths in the namespace.
func (k *kubeAPI) leases() string {
	return "/apis/coordination.k8s.io/v1/namespaces/" + k.namespace + "/leases"
}

func (k *kubeAPI) configMaps() string { return "/api/v1/namespaces/" + k.namespace + "/configmaps" }

// do sends one request; in (if not nil) is sent as JSON and out (if not
// nil) decoded from a 2xx answer.
func (k *kubeAPI) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	resp, err := k.send(ctx, method, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return k.failure(method, path, resp)
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(out); err != nil {
		return fmt.Errorf("kubernetes %s %s: undecodable answer: %w", method, path, err)
	}
	return nil
}

func (k *kubeAPI) send(ctx context.Context, method, path string, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, k.base+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	tok, err := k.token()
	if err != nil {
		return nil, err
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	k.requests.Add(1)
	resp, err := k.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("kubernetes %s %s: %w", method, path, err)
	}
	return resp, nil
}

// failure reads the Status the API server sends with an error.
func (k *kubeAPI) failure(method, path string, resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	var st struct {
		Message string `json:"message"`
	}
	msg := strings.TrimSpace(string(b))
	if json.Unmarshal(b, &st) == nil && st.Message != "" {
		msg = st.Message
	}
	return &apiError{method: method, path: path, code: resp.StatusCode, msg: msg}
}

// list reads a collection selected by labels into out (a *xxxList).
func (k *kubeAPI) list(ctx context.Context, coll string, selector string, out any) error {
	return k.do(ctx, http.MethodGet, coll+"?labelSelector="+url.QueryEscape(selector), nil, out)
}

// watchEvent is one line of a watch stream.
type watchEvent struct {
	Type   string          `json:"type"` // ADDED, MODIFIED, DELETED, BOOKMARK, ERROR
	Object json.RawMessage `json:"object"`
}

// watch streams the changes of a collection after resourceVersion rv to
// each, until the server ends the stream, ctx ends or each fails.
func (k *kubeAPI) watch(ctx context.Context, coll, selector, rv string, each func(watchEvent) error) error {
	q := url.Values{"watch": {"1"}, "labelSelector": {selector}, "resourceVersion": {rv},
		"allowWatchBookmarks": {"true"}, "timeoutSeconds": {"300"}}
	resp, err := k.send(ctx, http.MethodGet, coll+"?"+q.Encode(), nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return k.failure(http.MethodGet, coll, resp)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var ev watchEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return fmt.Errorf("kubernetes watch %s: undecodable event: %w", coll, err)
		}
		if ev.Type == "ERROR" {
			return fmt.Errorf("kubernetes watch %s: %s", coll, ev.Object)
		}
		if err := each(ev); err != nil {
			return err
		}
	}
	return sc.Err()
}

// objectMeta is the part of metadata the backend reads and writes.
type objectMeta struct {
	Name            string            `json:"name"`
	Namespace       string            `json:"namespace,omitempty"`
	ResourceVersion string            `json:"resourceVersion,omitempty"`
	Labels          map[string]string `json:"labels,omitempty"`
	Annotations     map[string]string `json:"annotations,omitempty"`
}

type listMeta struct {
	ResourceVersion string `json:"resourceVersion"`
}

// kubeLease is a coordination.k8s.io/v1 Lease.
type kubeLease struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Metadata   objectMeta `json:"metadata"`
	Spec       leaseSpec  `json:"spec"`
}

type leaseSpec struct {
	HolderIdentity       string     `json:"holderIdentity,omitempty"`
	LeaseDurationSeconds int        `json:"leaseDurationSeconds,omitempty"`
	AcquireTime          *microTime `json:"acquireTime,omitempty"`
	RenewTime            *microTime `json:"renewTime,omitempty"`
	LeaseTransitions     int        `json:"leaseTransitions,omitempty"`
}

type leaseList struct {
	Metadata listMeta    `json:"metadata"`
	Items    []kubeLease `json:"items"`
}

// kubeConfigMap is a v1 ConfigMap; entries go in binaryData (base64 in
// JSON, as encoding/json writes []byte), so any bytes are kept.
type kubeConfigMap struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   objectMeta        `json:"metadata"`
	Data       map[string]string `json:"data,omitempty"`
	BinaryData map[string][]byte `json:"binaryData,omitempty"`
}

type configMapList struct {
	Metadata listMeta        `json:"metadata"`
	Items    []kubeConfigMap `json:"items"`
}

// microTime is metav1.MicroTime's wire form.
type microTime struct{ time.Time }

const microLayout = "2006-01-02T15:04:05.000000Z07:00"

func (m microTime) MarshalJSON() ([]byte, error) {
	return json.Marshal(m.UTC().Format(microLayout))
}

func (m *microTime) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	m.Time = t
	return err
}

func now() *microTime { return &microTime{time.Now()} }
