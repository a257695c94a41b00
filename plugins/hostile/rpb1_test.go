package main

import (
	"context"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/testing/guesttest"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// ABI §4: binary records are an answer only to a host that offered them.
// Offered JSON only, the host refuses them as a bad answer; offered
// both, it takes them.
func TestRecordsNotOfferedAreRefused(t *testing.T) {
	b, _ := hostabi.AppendNodeRecords(nil, []hostabi.Node{{UUID: "5d7e0f5c-0000-4000-8000-000000000001", Name: "decoy", ResourceClass: "baremetal"}})
	cfg := map[string]any{"repeat": map[string]any{"head": string(b), "count": 0}}
	p := guesttest.WasmLoader(raw()(t), wasmhost.Options{JSONAnswers: true}).OK(t, cfg)
	nodes, err := p.ListNodes(context.Background(), hostabi.ListNodesRequest{})
	if nodes != nil || !wasmhost.IsKind(err, wasmhost.KindBadAnswer) || !strings.Contains(err.Error(), "answer refused: in rpb1, which the host did not offer") {
		t.Fatalf("nodes %v, err %v", nodes, err)
	}
	p = guesttest.WasmLoader(raw()(t), wasmhost.Options{}).OK(t, cfg)
	if nodes, err = p.ListNodes(context.Background(), hostabi.ListNodesRequest{}); err != nil || len(nodes) != 1 {
		t.Fatalf("offered records: %v %v", nodes, err)
	}
}
