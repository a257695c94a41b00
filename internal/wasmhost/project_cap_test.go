package wasmhost_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// json_project caps its frame at the memory limit: a 2 MB body of empty
// objects would project to 75 MB (8 bytes for each of the fake's 14
// fields, per record), more than the guest may hold, and is refused
// cleanly instead of costing the plugin host that memory.
func TestJSONProjectFrameIsCappedAtTheMemoryLimit(t *testing.T) {
	page := `{"nodes": [` + strings.TrimSuffix(strings.Repeat("{},", 700_000), ",") + `]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(page)) }))
	defer srv.Close()
	p := mustLoad(t, fakeWasm(t), map[string]any{"world": "world"},
		wasmhost.Options{Services: map[string]string{"world": srv.URL}, MemoryLimit: 64 << 20})
	_, err := p.ListNodes(context.Background(), hostabi.ListNodesRequest{})
	want := "json projection: the projected body exceeds the 67108864-byte cap"
	if !wasmhost.IsKind(err, wasmhost.KindPlugin) || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want a plugin error with %q", err, want)
	}
}
