package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/testing/guesttest"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// world = "<service>": every call reads the world afresh, so a harness
// can change it under one running plugin (internal/testing/soak does).
func TestWorldService(t *testing.T) {
	const a, b = "aaaaaaaa-0000-4000-8000-000000000001", "bbbbbbbb-0000-4000-8000-000000000002"
	var mu sync.Mutex
	var nodes string
	var status int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.WriteHeader(status)
		switch r.URL.Path {
		case "/nodes":
			w.Write([]byte(nodes))
		case "/instances":
			w.Write([]byte(`{"instances": [{"uuid": "i", "node_uuid": "` + a + `"}]}`))
		}
	}))
	defer srv.Close()
	opts := wasmhost.Options{Services: map[string]string{"world": srv.URL}}
	guesttest.Run(t, ".", newFake, opts, func(t *testing.T, load guesttest.Loader) {
		mu.Lock()
		nodes = `{"nodes": [{"uuid": "` + a + `", "resource_class": "gold", "traits": ["CUSTOM_X"], "maintenance": true,
			"resources": {"VCPU": {"total": 8}}, "shard": "s1"}]}`
		status = 200
		mu.Unlock()
		p := load.OK(t, map[string]any{"world": "world"})
		ctx := context.Background()
		got, err := p.ListNodes(ctx, hostabi.ListNodesRequest{})
		if err != nil || len(got) != 1 || got[0].UUID != a || !got[0].Maintenance || got[0].Shard != "s1" ||
			!slices.Equal(got[0].Traits, []string{"CUSTOM_X"}) || got[0].Resources["VCPU"].Total != 8 {
			t.Fatalf("nodes %+v, err %v", got, err)
		}
		if in, err := p.ListInstances(ctx); err != nil || len(in) != 1 || in[0].NodeUUID != a {
			t.Fatalf("instances %+v, err %v", in, err)
		}
		mu.Lock()
		nodes = `{"nodes": [{"uuid": "` + b + `"}]}`
		mu.Unlock()
		deleted, present, err := p.ConfirmDeleted(ctx, []string{a, b})
		if err != nil || !slices.Equal(deleted, []string{a}) || !slices.Equal(present, []string{b}) {
			t.Fatalf("deleted %v present %v err %v", deleted, present, err)
		}
		mu.Lock()
		status = 503
		mu.Unlock()
		if _, err := p.ListNodes(ctx, hostabi.ListNodesRequest{}); err == nil || !strings.Contains(err.Error(), "answered 503") {
			t.Fatalf("err = %v", err)
		}
	})
}
