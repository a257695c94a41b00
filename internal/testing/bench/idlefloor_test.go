package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// The minimal idle job finds every provider in compact and spaced JSON
// and counts only the new and the moved.
func TestIdleFloorCountsChanges(t *testing.T) {
	body := `{"resource_providers":[{"uuid":"a","name":"a","generation":1,"links":[],"root_provider_uuid":"a"},` +
		`{"uuid": "b", "generation": 7}]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("required") != "CUSTOM_OWNER" || r.Header.Get("X-Auth-Token") == "" {
			http.Error(w, "bad request", 400)
			return
		}
		w.Write([]byte(body))
	}))
	defer srv.Close()
	f := newIdleFloor(srv.URL, "CUSTOM_OWNER")
	ctx := context.Background()
	for i, want := range []int{2, 0} {
		if got, err := f.run(ctx); err != nil || got != want {
			t.Fatalf("run %d: %d changed, %v; want %d", i, got, err, want)
		}
	}
	body = `{"resource_providers":[{"uuid":"a","generation":2},{"uuid": "b", "generation": 7},{"uuid":"c","generation":0}]}`
	if got, err := f.run(ctx); err != nil || got != 2 {
		t.Fatalf("after a move and a new one: %d changed, %v", got, err)
	}
	body = `{"resource_providers":[{"uuid":"a"}]}`
	if _, err := f.run(ctx); err == nil {
		t.Fatal("a provider without a generation passed")
	}
}
