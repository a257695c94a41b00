package coord_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/coord"
	"github.com/rpengine/rpengine/internal/testing/kubetest"
)

// kubeRig is one fleet prefix in one namespace of a real kube-apiserver.
type kubeRig struct {
	t      *testing.T
	srv    *kubetest.Server
	ns     string
	prefix string
}

func (r *kubeRig) access(server string) coord.KubeAccess {
	if server == "" {
		server = r.srv.URL
	}
	return coord.KubeAccess{Kubeconfig: r.srv.Kubeconfig(r.t, server, r.ns), Namespace: r.ns}
}

func (r *kubeRig) config(id string, div coord.Division) coord.Config {
	return coord.Config{Prefix: r.prefix, Member: id, OwnerTrait: "CUSTOM_RPENGINE_OWNER_" + strings.ToUpper(id),
		TTL: ttl, Division: div}
}

func (r *kubeRig) member(id string, div coord.Division, server ...string) *coord.KubeCoordinator {
	r.t.Helper()
	cfg := r.config(id, div)
	c, err := coord.NewKube(context.Background(), cfg, r.access(strings.Join(server, "")))
	if err != nil {
		r.t.Fatalf("member %s: %v", id, err)
	}
	r.t.Cleanup(c.Close)
	return c
}

// syncer is what settle needs of either backend.
type syncer interface {
	Sync(context.Context) (coord.Assignment, error)
}

// settleAny is settle for any backend.
func settleAny[S syncer](t *testing.T, cs map[string]S, units int) map[string]coord.Assignment {
	t.Helper()
	for round := 0; round < 10; round++ {
		as, owner, done := map[string]coord.Assignment{}, map[string]string{}, true
		for id, c := range cs {
			a, err := c.Sync(context.Background())
			if err != nil {
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
		if done && len(owner) == units {
			return as
		}
	}
	t.Fatal("members did not settle in 10 rounds")
	return nil
}

// TestKube runs the coordination tests against a real kube-apiserver,
// one server for all (it takes a while to start): make test-kube.
func TestKube(t *testing.T) {
	srv := kubetest.Start(t)
	srv.Namespace(t, "rpengine-test")
	n := 0
	rig := func(t *testing.T) *kubeRig {
		n++
		return &kubeRig{t: t, srv: srv, ns: "rpengine-test", prefix: fmt.Sprintf("/kube-%d/", n)}
	}
	t.Run("DivideAndRebalance", func(t *testing.T) { kubeDivide(t, rig(t)) })
	t.Run("FenceEndsBeforeTakeOver", func(t *testing.T) { kubeFence(t, rig(t)) })
	t.Run("RestartWaitsForTheOldLease", func(t *testing.T) { kubeRestart(t, rig(t)) })
	t.Run("SameIDIsRefused", func(t *testing.T) { kubeSameID(t, rig(t)) })
	t.Run("DivisionsMustAgree", func(t *testing.T) { kubeDivisions(t, rig(t)) })
	t.Run("StaticClaimsAreExclusive", func(t *testing.T) { kubeStatic(t, rig(t)) })
	t.Run("Record", func(t *testing.T) { kubeRecord(t, rig(t)) })
	t.Run("RecordFencedAfterTakeOver", func(t *testing.T) { kubeRecordFenced(t, rig(t)) })
	t.Run("RBAC", func(t *testing.T) { kubeRBAC(t, rig(t)) })
	t.Run("Soak", func(t *testing.T) { kubeSoak(t, rig(t)) })
	t.Run("RequestsPerCycle", func(t *testing.T) { kubeRequests(t, rig(t)) })
}

func kubeDivide(t *testing.T, r *kubeRig) {
	div := coord.Division{Partitions: 24}
	cs := map[string]*coord.KubeCoordinator{}
	for _, id := range []string{"e1", "e2", "e3"} {
		cs[id] = r.member(id, div)
	}
	as := settleAny(t, cs, 24)
	if got := as["e1"].Members; len(got) != 3 {
		t.Fatalf("members %v", got)
	}
	a := as["e1"]
	if !a.MayTakeOver("CUSTOM_RPENGINE_OWNER_E2") || a.MayTakeOver("CUSTOM_RPENGINE_OWNER_E1") ||
		a.MayTakeOver("CUSTOM_RPENGINE_OWNER_STRANGER") {
		t.Fatal("takeover allowed only from other members of the division")
	}
	cs["e4"] = r.member("e4", div)
	as = settleAny(t, cs, 24)
	if len(as["e4"].Held) == 0 {
		t.Fatal("newcomer holds nothing")
	}
	// One leaves cleanly: emptying its member Lease ends its claims at once.
	gone := as["e2"].Held
	cs["e2"].Close()
	delete(cs, "e2")
	left := time.Now()
	as = settleAny(t, cs, 24)
	for _, u := range gone {
		if !slices.ContainsFunc([]string{"e1", "e3", "e4"}, func(id string) bool { return slices.Contains(as[id].Held, u) }) {
			t.Fatalf("%s of the leaver not taken", u)
		}
	}
	if d := time.Since(left); d >= ttl {
		t.Fatalf("a clean leave took %s to hand over; want less than a TTL (%s)", d, ttl)
	}
	// The moves travel with the next renewal (a quarter TTL).
	var st coord.Status
	for deadline := time.Now().Add(5 * ttl); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var err error
		if st, err = coord.ReadKubeStatus(context.Background(), r.access(""), r.prefix, div, 10); err != nil {
			t.Fatal(err)
		}
		if len(st.Moves) == 10 {
			break
		}
	}
	if len(st.Members) != 3 || len(st.Pending) != 0 || len(st.Claims) != 24 || len(st.Moves) != 10 {
		t.Fatalf("status: %d members, pending %v, %d claims, %d moves", len(st.Members), st.Pending, len(st.Claims), len(st.Moves))
	}
}
