package coord_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/coord"
	"github.com/rpengine/rpengine/internal/testing/etcdtest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// ttl is short for fast tests, yet leaves a stalled test machine 1.5 s
// before a lease counts as unproven.
const ttl = 2 * time.Second

var prefixes atomic.Int64

// rig is one etcd prefix shared by the members of a test.
type rig struct {
	t      *testing.T
	url    string
	prefix string
}

func newRig(t *testing.T) *rig {
	return &rig{t: t, url: etcdtest.Start(t), prefix: fmt.Sprintf("/test-%d/", prefixes.Add(1))}
}

func (r *rig) member(id string, div coord.Division, endpoint ...string) *coord.Coordinator {
	r.t.Helper()
	if len(endpoint) == 0 {
		endpoint = []string{r.url}
	}
	c, err := coord.New(context.Background(), coord.Config{Endpoints: endpoint, Prefix: r.prefix, Member: id,
		OwnerTrait: "CUSTOM_RPENGINE_OWNER_" + strings.ToUpper(id), TTL: ttl, Division: div})
	if err != nil {
		r.t.Fatalf("member %s: %v", id, err)
	}
	r.t.Cleanup(c.Close)
	return c
}

func sync(t *testing.T, c *coord.Coordinator) coord.Assignment {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a, err := c.Sync(ctx)
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	return a
}

// settle syncs the members round by round, as their cycles would, until
// every member holds exactly its target; at every round no unit is held
// twice.
func settle(t *testing.T, cs map[string]*coord.Coordinator, units int) map[string]coord.Assignment {
	t.Helper()
	for round := 0; round < 8; round++ {
		as := map[string]coord.Assignment{}
		owner := map[string]string{}
		done := true
		for id, c := range cs {
			a, err := c.Sync(context.Background())
			if err != nil { // e.g. a renewal late on a loaded machine: holds nothing
				t.Logf("round %d: %s: %v", round, id, err)
				done = false
				continue
			}
			as[id] = a
			done = done && len(a.Waiting) == 0 && slices.Equal(a.Held, a.Target)
			for _, u := range a.Held {
				if o, dup := owner[u]; dup {
					t.Fatalf("round %d: %s held by %s and %s", round, u, o, id)
				}
				owner[u] = id
			}
		}
		if done {
			if len(owner) != units {
				t.Fatalf("settled holding %d of %d units", len(owner), units)
			}
			return as
		}
	}
	t.Fatal("members did not settle in 8 rounds")
	return nil
}

func TestMembersDivideAndRebalance(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	div := coord.Division{Partitions: 24}
	cs := map[string]*coord.Coordinator{}
	for _, id := range []string{"e1", "e2", "e3"} {
		cs[id] = r.member(id, div)
	}
	as := settle(t, cs, 24)
	if got := as["e1"].Members; len(got) != 3 {
		t.Fatalf("members %v", got)
	}
	// A member is in the seen registry from its first Sync on, before it
	// can hold anything; e2 may have synced after e1 in that round.
	a := sync(t, cs["e1"])
	if !a.MayTakeOver("CUSTOM_RPENGINE_OWNER_E2") || a.MayTakeOver("CUSTOM_RPENGINE_OWNER_E1") ||
		a.MayTakeOver("CUSTOM_RPENGINE_OWNER_STRANGER") || a.MayTakeOver("OWNER_NOVA") {
		t.Fatal("takeover allowed only from other members of the division")
	}

	// A fourth joins: it waits for the others to release between cycles.
	cs["e4"] = r.member("e4", div)
	as = settle(t, cs, 24)
	if len(as["e4"].Held) == 0 {
		t.Fatal("newcomer holds nothing")
	}

	// One leaves cleanly: its claims go with its lease at once.
	gone := as["e2"].Held
	cs["e2"].Close()
	delete(cs, "e2")
	as = settle(t, cs, 24)
	for _, u := range gone {
		if !slices.ContainsFunc([]string{"e1", "e3", "e4"}, func(id string) bool { return slices.Contains(as[id].Held, u) }) {
			t.Fatalf("%s of the leaver not taken", u)
		}
	}
	st, err := coord.ReadStatus(context.Background(), []string{r.url}, coord.Access{}, r.prefix, div, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Members) != 3 || len(st.Pending) != 0 || len(st.Claims) != 24 || len(st.Moves) != 10 {
		t.Fatalf("status: %d members, pending %v, %d claims, %d moves", len(st.Members), st.Pending, len(st.Claims), len(st.Moves))
	}
}

func TestFenceEndsBeforeTheLeaseCanExpire(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	div := coord.Division{Partitions: 4}
	proxy := etcdtest.NewProxy(t, r.url)
	cut := r.member("cut", div, proxy.URL())
	peer := r.member("peer", div)
	as := settle(t, map[string]*coord.Coordinator{"cut": cut, "peer": peer}, 4)
	held := as["cut"].Held
	if len(held) == 0 {
		t.Skip("rendezvous gave the cut member nothing") // fixed names: does not happen
	}
	ctx, cancel := cut.Fence(context.Background(), as["cut"])
	defer cancel()

	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{r.url}})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	proxy.Sever()
	severed := time.Now()
	var fenced, expired time.Time
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && expired.IsZero(); time.Sleep(20 * time.Millisecond) {
		if fenced.IsZero() && ctx.Err() != nil {
			fenced = time.Now()
		}
		g, err := cli.Get(context.Background(), r.prefix+"members/cut")
		if err == nil && len(g.Kvs) == 0 {
			expired = time.Now()
		}
	}
	if fenced.IsZero() || expired.IsZero() || !fenced.Before(expired) {
		t.Fatalf("severed at %s: fence ended at %s, lease expired at %s; the fence must end first",
			severed.Format(time.StampMilli), fenced.Format(time.StampMilli), expired.Format(time.StampMilli))
	}
	t.Logf("fence ended %s after the cut, the lease %s after", fenced.Sub(severed), expired.Sub(severed))
	if _, err := cut.Sync(context.Background()); err == nil {
		t.Fatal("sync without etcd succeeded")
	}

	// The peer takes the units over; the cut member, back, gets its
	// share again through a new registration.
	a := sync(t, peer)
	if len(a.Held) != 4 {
		t.Fatalf("peer holds %v after the lease expired", a.Held)
	}
	proxy.Heal()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if _, err = cut.Sync(context.Background()); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("no sync after healing: %v", err)
	}
	settle(t, map[string]*coord.Coordinator{"cut": cut, "peer": peer}, 4)
}

func TestSameIDIsRefused(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.member("twin", coord.Division{Partitions: 2})
	_, err := coord.New(context.Background(), coord.Config{Endpoints: []string{r.url}, Prefix: r.prefix, Member: "twin",
		TTL: ttl, Division: coord.Division{Partitions: 2}, RegisterWait: 3 * ttl})
	if err == nil || !strings.Contains(err.Error(), "must never share an id") {
		t.Fatalf("second engine with the same id: %v", err)
	}
}

func TestDivisionsMustAgree(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	a := r.member("a", coord.Division{Partitions: 8})
	r.member("b", coord.Division{Partitions: 16})
	if _, err := a.Sync(context.Background()); err == nil || !strings.Contains(err.Error(), "divides by") {
		t.Fatalf("sync with a disagreeing member: %v", err)
	}
}

func TestStaticClaimsAreExclusive(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	static := func(id string, shards ...string) *coord.Coordinator {
		c, err := coord.New(context.Background(), coord.Config{Endpoints: []string{r.url}, Prefix: r.prefix,
			Member: id, TTL: ttl, Static: coord.StaticUnits(shards, nil)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return c
	}
	a := static("a", "s1", "s2")
	if got := sync(t, a).Held; !slices.Equal(got, []string{"shard/s1", "shard/s2"}) {
		t.Fatalf("a holds %v", got)
	}
	b := static("b", "s2", "s3")
	if _, err := b.Sync(context.Background()); err == nil || !strings.Contains(err.Error(), "shard/s2 by a") {
		t.Fatalf("b shares shard s2 with a: %v", err)
	}
	// An engine for the whole fleet, started later, yields to both.
	all := static("all")
	if _, err := all.Sync(context.Background()); err == nil || !strings.Contains(err.Error(), "overlap") {
		t.Fatalf("whole-fleet engine beside sharded ones: %v", err)
	}
}

// A crashed engine restarted at once finds its old registration still
// alive: it waits for that lease to expire, then registers. etcd's history
// of the member key shows it: the old registration ends (its lease
// expired, not taken over) before the new one is written.
func TestRestartAfterCrashWaitsForTheOldLease(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	proxy := etcdtest.NewProxy(t, r.url)
	r.member("phoenix", coord.Division{Partitions: 2}, proxy.URL())
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{r.url}})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	key := r.prefix + "members/phoenix"
	before, err := cli.Get(ctx, key)
	if err != nil || len(before.Kvs) != 1 {
		t.Fatalf("first registration: %v %v", before, err)
	}
	oldLease := clientv3.LeaseID(before.Kvs[0].Lease)
	proxy.Sever() // the old process can neither renew nor revoke: as dead
	r.member("phoenix", coord.Division{Partitions: 2})

	if ttl, err := cli.TimeToLive(ctx, oldLease); err != nil || ttl.TTL != -1 {
		t.Fatalf("the new registration returned while the old lease lived: %+v %v", ttl, err)
	}
	w := cli.Watch(ctx, key, clientv3.WithRev(before.Header.Revision+1))
	var history []string
	for len(history) < 2 {
		resp, ok := <-w
		if !ok || resp.Err() != nil {
			t.Fatalf("history of %s: %v so far, watch ended: %v", key, history, resp.Err())
		}
		for _, ev := range resp.Events {
			switch {
			case ev.Type == clientv3.EventTypeDelete:
				history = append(history, "expired")
			case clientv3.LeaseID(ev.Kv.Lease) == oldLease:
				history = append(history, "old lease rewritten")
			default:
				history = append(history, "registered")
			}
		}
	}
	if history[0] != "expired" || history[1] != "registered" {
		t.Fatalf("history of %s after the crash: %v; want the old registration to expire first", key, history)
	}
}

func TestIDsWithOneOwnerMarkerAreRefused(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	member := func(id string) *coord.Coordinator {
		c, err := coord.New(context.Background(), coord.Config{Endpoints: []string{r.url}, Prefix: r.prefix, Member: id,
			OwnerTrait: "CUSTOM_RPENGINE_OWNER_RACK_A", TTL: ttl, Division: coord.Division{Partitions: 2}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return c
	}
	sync(t, member("rack-a"))
	if _, err := member("rack_a").Sync(context.Background()); err == nil || !strings.Contains(err.Error(), "same owner marker") {
		t.Fatalf("two ids, one marker: %v", err)
	}
}
