package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"
)

// enrollTimeout bounds each phase of enrolling a batch of nodes.
const enrollTimeout = 10 * time.Minute

// enrollNodes enrolls nodes into the real Ironic until there are n, each
// made available and powered on, as ironictest's Available does one by
// one, but phase by phase for the whole batch: every node is asked for the
// next state, then one node listing per poll waits for all of them. Per
// node polling of hundreds of nodes kept Ironic's single process busy
// answering the polls instead of moving the nodes.
func enrollNodes(t *testing.T, ironic string, have []string, n int) []string {
	t.Helper()
	ctx, start := t.Context(), time.Now()
	var fresh []string
	var mu sync.Mutex
	parallel(t, n-len(have), func(i int) error {
		u, err := createNode(ctx, ironic, fmt.Sprintf("bench-%d", len(have)+i))
		mu.Lock()
		fresh = append(fresh, u)
		mu.Unlock()
		return err
	})
	phases := []struct {
		path, target string
		done         func(node ironicNode) bool
	}{
		{"provision", "manage", func(nd ironicNode) bool { return nd.Provision == "manageable" && nd.Target == nil }},
		{"provision", "provide", func(nd ironicNode) bool { return nd.Provision == "available" && nd.Target == nil }},
		{"power", "power on", func(nd ironicNode) bool { return nd.Power != nil && *nd.Power == "power on" && nd.TargetPower == nil }},
	}
	t.Logf("ironic: %d nodes created in %s", len(fresh), time.Since(start).Round(time.Second))
	for _, ph := range phases {
		start := time.Now()
		parallel(t, len(fresh), func(i int) error {
			return changeState(ctx, ironic, fresh[i], ph.path, ph.target)
		})
		waitNodes(t, ironic, fresh, ph.target, ph.done)
		t.Logf("ironic: %d nodes through %q in %s", len(fresh), ph.target, time.Since(start).Round(time.Second))
	}
	return append(have, fresh...)
}

// parallel runs f(0..n-1) four at a time and fails on the first error.
func parallel(t *testing.T, n int, f func(i int) error) {
	t.Helper()
	work := make(chan int)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := range work {
				if err := f(i); err != nil {
					errs <- err
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
}

func createNode(ctx context.Context, ironic, name string) (string, error) {
	body := map[string]any{"name": name, "driver": "fake-hardware", "resource_class": "baremetal-gold",
		"properties": map[string]any{"cpus": 16, "memory_mb": 65536, "local_gb": 500, "cpu_arch": "x86_64"}}
	var out struct {
		UUID string `json:"uuid"`
	}
	b, err := ironicDo(ctx, "POST", ironic+"/v1/nodes", body, http.StatusCreated)
	if err == nil {
		err = json.Unmarshal(b, &out)
	}
	if err == nil && out.UUID == "" {
		err = fmt.Errorf("ironic: create node %s: no uuid in %s", name, b)
	}
	return out.UUID, err
}

// changeState asks for a provision or power target, retrying while the
// node is still locked by its previous task.
func changeState(ctx context.Context, ironic, node, path, target string) error {
	for try := 0; ; try++ {
		_, err := ironicDo(ctx, "PUT", ironic+"/v1/nodes/"+node+"/states/"+path, map[string]any{"target": target}, http.StatusAccepted)
		var se statusError
		if err == nil || try == 50 || !asStatus(err, &se) || se.status != http.StatusConflict {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

type ironicNode struct {
	UUID        string  `json:"uuid"`
	Provision   string  `json:"provision_state"`
	Target      *string `json:"target_provision_state"`
	Power       *string `json:"power_state"`
	TargetPower *string `json:"target_power_state"`
	LastError   *string `json:"last_error"`
}

// waitNodes polls Ironic's node listing until done holds for every node
// of want.
func waitNodes(t *testing.T, ironic string, want []string, what string, done func(ironicNode) bool) {
	t.Helper()
	deadline := time.Now().Add(enrollTimeout)
	for {
		all, err := listNodes(t.Context(), ironic)
		if err != nil {
			t.Fatal(err)
		}
		var late []ironicNode
		for _, u := range want {
			if nd, ok := all[u]; !ok || !done(nd) {
				late = append(late, nd)
			}
		}
		if len(late) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("ironic: %d of %d nodes not through %q after %s, e.g. %+v", len(late), len(want), what, enrollTimeout, late[0])
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func listNodes(ctx context.Context, ironic string) (map[string]ironicNode, error) {
	out := map[string]ironicNode{}
	q := url.Values{"fields": {"uuid,provision_state,target_provision_state,power_state,target_power_state,last_error"}, "limit": {"1000"}}
	for {
		b, err := ironicDo(ctx, "GET", ironic+"/v1/nodes?"+q.Encode(), nil, http.StatusOK)
		if err != nil {
			return nil, err
		}
		var page struct {
			Nodes []ironicNode `json:"nodes"`
		}
		if err := json.Unmarshal(b, &page); err != nil {
			return nil, fmt.Errorf("ironic: node listing: %w", err)
		}
		for _, nd := range page.Nodes {
			out[nd.UUID] = nd
		}
		if len(page.Nodes) < 1000 {
			return out, nil
		}
		q.Set("marker", page.Nodes[len(page.Nodes)-1].UUID)
	}
}

type statusError struct {
	status int
	msg    string
}

func (e statusError) Error() string { return e.msg }

func asStatus(err error, se *statusError) bool {
	s, ok := err.(statusError)
	if ok {
		*se = s
	}
	return ok
}

// ironicDo sends one request to Ironic (noauth) and wants status.
func ironicDo(ctx context.Context, method, u string, body any, status int) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.82")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if resp.StatusCode != status {
		return nil, statusError{resp.StatusCode, fmt.Sprintf("ironic: %s %s: %d %s", method, u, resp.StatusCode, b[:min(len(b), 2000)])}
	}
	return b, nil
}
