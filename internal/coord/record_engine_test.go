package coord_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/coord"
	"github.com/rpengine/rpengine/internal/testing/etcdtest"
	"github.com/rpengine/rpengine/internal/testing/placementtest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// nodes is an engine.Source of a fixed fleet the test edits.
type nodes struct {
	mu   gosync.Mutex
	list []hostabi.Node
}

func (n *nodes) ListNodes(context.Context, hostabi.ListNodesRequest) ([]hostabi.Node, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.list), nil
}

func (n *nodes) ListInstances(context.Context) ([]hostabi.Instance, error) { return nil, nil }

func (n *nodes) setTraits(traits ...string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for i := range n.list {
		n.list[i].Traits = traits
	}
}

// setSome gives the first k nodes traits.
func (n *nodes) setSome(k int, traits ...string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for i := range min(k, len(n.list)) {
		n.list[i].Traits = traits
	}
}

func fleetOf(prefix string, count int) *nodes {
	n := &nodes{}
	for i := range count {
		n.list = append(n.list, hostabi.Node{UUID: fmt.Sprintf("%s-0000-4000-8000-%012d", prefix, i), ResourceClass: "gold",
			PowerState: "power off", ProvisionState: "available"})
	}
	return n
}

// recordEngine is one engine on the real Placement whose record goes to
// etcd through a proxy the test can sever.
type recordEngine struct {
	t     *testing.T
	c     *coord.Coordinator
	proxy *etcdtest.Proxy
	eng   *engine.Engine
	src   *nodes
	url   string
	etcd  string
	id    string
}

func newRecordEngine(t *testing.T, src *nodes) *recordEngine {
	url := placementtest.Shared(t)
	etcd := etcdtest.Start(t)
	proxy := etcdtest.NewProxy(t, etcd)
	id := fmt.Sprintf("rec-%x-%d", os.Getpid(), prefixes.Add(1))
	c, err := coord.New(context.Background(), coord.Config{Endpoints: []string{proxy.URL()}, Prefix: "/" + id + "/", Member: id,
		OwnerTrait: engine.OwnerTrait(id), TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	pc, err := placement.New(context.Background(), placement.Config{Endpoint: url, Token: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	pol := engine.Policy{OwnerTrait: engine.OwnerTrait(id), MarkerTraits: []string{"COMPUTE_NODE"}}
	eng := engine.New(src, pc, pol, engine.Options{}, nil, nil)
	return &recordEngine{t: t, c: c, proxy: proxy, eng: eng, src: src, url: url, etcd: etcd, id: id}
}

// held syncs until the engine holds its (static) scope, and hands the
// engine the record store of that assignment.
func (r *recordEngine) held() coord.Assignment {
	r.t.Helper()
	a := sync(r.t, r.c)
	r.eng.ShareRecord(r.c.Records(a, "test-placement"), false)
	return a
}

// traits reads the providers' traits from the real Placement.
func (r *recordEngine) traits() map[string][]string {
	pc, err := placement.New(context.Background(), placement.Config{Endpoint: r.url, Token: "admin"})
	if err != nil {
		r.t.Fatal(err)
	}
	out := map[string][]string{}
	for _, n := range r.src.list {
		_, ts, err := pc.Traits(context.Background(), strings.ToLower(n.UUID))
		if err != nil {
			r.t.Fatal(err)
		}
		out[n.UUID] = ts
	}
	return out
}

func cycleErrors(rep engine.Report, kind engine.ErrorKind) bool {
	return slices.ContainsFunc(rep.Errors, func(e engine.Error) bool { return e.Kind == kind })
}

// An etcd outage while a record write is due: the cycle that would add
// CUSTOM_GPU writes nothing to Placement; once etcd is back it does.
func TestEtcdOutageWhileARecordWriteIsDueWritesNothing(t *testing.T) {
	src := fleetOf(fmt.Sprintf("%08x", os.Getpid()&0xffffff|0x1000000), 5)
	r := newRecordEngine(t, src)
	a := r.held()
	ctx, cancel := r.c.Fence(context.Background(), a)
	if rep := r.eng.Cycle(ctx); len(rep.Errors) > 0 || rep.Created != 5 {
		t.Fatalf("first cycle: %+v", rep)
	}
	cancel()
	before := r.traits()

	src.setTraits("CUSTOM_GPU")
	a = r.held()
	ctx, cancel = r.c.Fence(context.Background(), a)
	defer cancel()
	r.proxy.Sever()
	rep := r.eng.Cycle(ctx)
	if !cycleErrors(rep, engine.ErrState) || !strings.Contains(fmt.Sprint(rep.Errors), "shared record") || rep.Updated != 0 {
		t.Fatalf("cycle during the outage: updated %d, errors %v", rep.Updated, rep.Errors)
	}
	if after := r.traits(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("Placement written during the etcd outage:\nbefore %v\nafter  %v", before, after)
	}

	r.proxy.Heal()
	var healed engine.Report
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		ca, err := r.c.Sync(context.Background())
		if err != nil {
			continue
		}
		r.eng.ShareRecord(r.c.Records(ca, "test-placement"), false)
		cctx, ccancel := r.c.Fence(context.Background(), ca)
		healed = r.eng.Cycle(cctx)
		ccancel()
		if len(healed.Errors) == 0 {
			break
		}
	}
	if healed.Updated != 5 || len(healed.Errors) > 0 {
		t.Fatalf("after etcd came back: %+v", healed)
	}
}

// A stale holder: its lease expired (revoked here, as etcd expires it
// while the engine is paused) after it synced. Its record write is
// refused, and so the cycle writes nothing to Placement.
func TestStaleHolderWritesNothingToPlacement(t *testing.T) {
	src := fleetOf(fmt.Sprintf("%08x", os.Getpid()&0xffffff|0x2000000), 3)
	r := newRecordEngine(t, src)
	a := r.held()
	if rep := r.eng.Cycle(context.Background()); len(rep.Errors) > 0 {
		t.Fatalf("first cycle: %+v", rep)
	}
	before := r.traits()
	src.setTraits("CUSTOM_GPU")
	r.revoke()
	// The cycle runs without the fence's context, as a paused process
	// would resume a cycle whose context had not seen the expiry yet.
	rep := r.eng.Cycle(context.Background())
	if !cycleErrors(rep, engine.ErrState) || !strings.Contains(fmt.Sprint(rep.Errors), "refused") {
		t.Fatalf("stale holder's cycle: %v", rep.Errors)
	}
	if after := r.traits(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("a stale holder wrote to Placement:\nbefore %v\nafter  %v", before, after)
	}
	_ = a
}

// revoke ends the engine's lease behind its back.
func (r *recordEngine) revoke() {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{r.etcd}, DialTimeout: 5 * time.Second})
	if err != nil {
		r.t.Fatal(err)
	}
	defer cli.Close()
	m, err := cli.Get(context.Background(), "/"+r.id+"/members/"+r.id)
	if err != nil || len(m.Kvs) != 1 {
		r.t.Fatalf("member key: %v %v", m, err)
	}
	if _, err := cli.Revoke(context.Background(), clientv3.LeaseID(m.Kvs[0].Lease)); err != nil {
		r.t.Fatal(err)
	}
}
