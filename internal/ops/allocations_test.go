package ops_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/ops"
)

// The node page names the consumers on the node's provider, with their
// type and project, read through the daemon's reader; without one, or
// when the read fails, it says why instead of showing none.
func TestNodePageShowsAllocations(t *testing.T) {
	r := nodesRun(t)
	h := r.ops.Handler()
	if _, html := get(t, h, "/node/"+nodeUUID(3)); !strings.Contains(html, `id="allocations-note">not read: the daemon has no Placement client yet`) {
		t.Errorf("without a reader the page should say the allocations were not read:\n%s", html)
	}
	var asked []string
	r.ops.SetAPI(&ops.API{Allocations: func(_ context.Context, uuid string) ([]ops.Allocation, error) {
		asked = append(asked, uuid)
		return []ops.Allocation{{Consumer: "inst-1", Type: "INSTANCE", Project: "p-1", Resources: map[string]int64{"CUSTOM_BAREMETAL_GOLD": 1}}}, nil
	}})
	_, html := get(t, h, "/node/"+nodeUUID(3))
	for _, s := range []string{`<tr class="allocation" data-consumer="inst-1">`, `<td>INSTANCE</td>`, `<code>p-1</code>`, `<code>CUSTOM_BAREMETAL_GOLD</code> 1`} {
		if !strings.Contains(html, s) {
			t.Errorf("node page lacks %q", s)
		}
	}
	if len(asked) != 1 || asked[0] != nodeUUID(3) {
		t.Errorf("reader asked for %v, want the one node", asked)
	}
	r.ops.SetAPI(&ops.API{Allocations: func(context.Context, string) ([]ops.Allocation, error) { return nil, nil }})
	if _, html := get(t, h, "/node/"+nodeUUID(3)); !strings.Contains(html, `id="allocations-none"`) {
		t.Error("an empty list should say no consumer uses the provider")
	}
	r.ops.SetAPI(&ops.API{Allocations: func(context.Context, string) ([]ops.Allocation, error) { return nil, errors.New("placement: 503") }})
	if _, html := get(t, h, "/node/"+nodeUUID(3)); !strings.Contains(html, "not read: placement: 503") {
		t.Error("a failed read should be named on the page")
	}
	// A view while another reads Placement is told so, not queued.
	reading, release := make(chan struct{}), make(chan struct{})
	r.ops.SetAPI(&ops.API{Allocations: func(context.Context, string) ([]ops.Allocation, error) {
		close(reading)
		<-release
		return nil, nil
	}})
	done := make(chan struct{})
	go func() { defer close(done); get(t, h, "/node/"+nodeUUID(3)) }()
	<-reading
	_, html = get(t, h, "/node/"+nodeUUID(3))
	close(release)
	<-done
	if !strings.Contains(html, "another node page is reading Placement") {
		t.Error("a second concurrent view should not wait for Placement")
	}
}
