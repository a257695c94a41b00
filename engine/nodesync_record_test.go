package engine_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/coord"
	"github.com/rpengine/rpengine/internal/testing/etcdtest"
	"github.com/rpengine/rpengine/internal/testing/placementtest"
)

// watchedStore is a RecordStore that runs check before each store.
type watchedStore struct {
	engine.RecordStore
	check func(put map[string][]byte)
}

func (w watchedStore) Store(ctx context.Context, put map[string][]byte, del []string) error {
	w.check(put)
	return w.RecordStore.Store(ctx, put, del)
}

// holder is c's assignment: in the static mode without units, the lease
// its record writes are made under.
func holder(t *testing.T, c *coord.Coordinator) coord.Assignment {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a, err := c.Sync(ctx)
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	return a
}

func member(t *testing.T, etcd, prefix, id string) *coord.Coordinator {
	c, err := coord.New(context.Background(), coord.Config{Endpoints: []string{etcd}, Prefix: prefix, Member: id,
		OwnerTrait: engine.OwnerTrait(id), TTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// A trait a node sync writes is in the shared record (etcd) before it is
// in Placement; so when the engine is lost with its state file and a
// peer takes its providers over, the peer removes the trait once the
// source drops it: no stray. The node sync once wrote to Placement
// without storing the shared record, and the trait stayed for ever.
func TestNodeSyncRecordsInTheSharedRecordFirst(t *testing.T) {
	url, etcd := placementtest.Shared(t), etcdtest.Start(t)
	tag := fmt.Sprintf("%08x", os.Getpid()&0xffffff|0x5000000)
	prefix, idA, idB := "/nsync-"+tag+"/", "nsync-a-"+tag, "nsync-b-"+tag
	src := &source{}
	for i := range 3 {
		src.nodes = append(src.nodes, hostabi.Node{UUID: fmt.Sprintf("%s-0000-4000-8000-%012d", tag, i), ResourceClass: "gold",
			PowerState: "power off", ProvisionState: "available"})
	}
	node := src.nodes[0].UUID
	pc, err := placement.New(context.Background(), placement.Config{Endpoint: url, Token: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	traits := func() []string {
		_, ts, err := pc.Traits(context.Background(), node)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}

	ca := member(t, etcd, prefix, idA)
	a := engine.New(src, pc, engine.Policy{OwnerTrait: engine.OwnerTrait(idA), MarkerTraits: []string{"COMPUTE_NODE"}}, engine.Options{}, nil, nil)
	stored := false
	a.ShareRecord(watchedStore{ca.Records(holder(t, ca), "nsync"), func(put map[string][]byte) {
		if strings.Contains(string(put[node]), "CUSTOM_NSYNC") && !stored {
			stored = true
			if slices.Contains(traits(), "CUSTOM_NSYNC") {
				t.Error("the trait reached Placement before the shared record")
			}
		}
	}}, false)
	if rep := a.Cycle(context.Background()); len(rep.Errors) > 0 || rep.Created != 3 {
		t.Fatalf("first cycle: created %d, errors %v", rep.Created, rep.Errors)
	}
	src.set(func(s *source) { s.nodes[0].Traits = []string{"CUSTOM_NSYNC"} })
	if rep := a.SyncNodes(context.Background(), src, []string{node}); len(rep.Errors) > 0 || len(rep.Written) != 1 {
		t.Fatalf("node sync: written %v, errors %v", rep.Written, rep.Errors)
	}
	if !stored || !slices.Contains(traits(), "CUSTOM_NSYNC") {
		t.Fatalf("after the node sync: stored in the shared record %v, Placement's traits %v", stored, traits())
	}

	ca.Close() // engine A is lost, and its state file with it
	cb := member(t, etcd, prefix, idB)
	b := engine.New(src, pc, engine.Policy{OwnerTrait: engine.OwnerTrait(idB), MarkerTraits: []string{"COMPUTE_NODE"},
		MayTakeOver: func(owner string) bool { return owner == engine.OwnerTrait(idA) }}, engine.Options{}, nil, nil)
	b.ShareRecord(cb.Records(holder(t, cb), "nsync"), true)
	src.set(func(s *source) { s.nodes[0].Traits = nil })
	if rep := b.Cycle(context.Background()); len(rep.Errors) > 0 {
		t.Fatalf("take-over cycle: %v", rep.Errors)
	}
	if ts := traits(); slices.Contains(ts, "CUSTOM_NSYNC") || !slices.Contains(ts, engine.OwnerTrait(idB)) {
		t.Fatalf("after the take-over the provider has %v: want B's marker and no CUSTOM_NSYNC", ts)
	}
}
