package coord_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/coord"
	"github.com/rpengine/rpengine/internal/testing/etcdtest"
)

// proxy puts a severable TCP proxy in front of the API server and
// returns it with the https URL to reach the server through it.
func (r *kubeRig) proxy() (*etcdtest.Proxy, string) {
	p := etcdtest.NewProxy(r.t, strings.TrimPrefix(r.srv.URL, "https://"))
	return p, "https://" + strings.TrimPrefix(p.URL(), "http://")
}

// A member cut off from the API server stops writing (its fence ends)
// before a peer, judging by its own clock, takes its claims; once back it
// registers anew and gets its share through ordinary hand-overs.
func kubeFence(t *testing.T, r *kubeRig) {
	div := coord.Division{Partitions: 4}
	p, via := r.proxy()
	cut := r.member("cut", div, via)
	peer := r.member("peer", div)
	as := settleAny(t, map[string]*coord.KubeCoordinator{"cut": cut, "peer": peer}, 4)
	if len(as["cut"].Held) == 0 {
		t.Skip("rendezvous gave the cut member nothing") // fixed names: does not happen
	}
	ctx, cancel := cut.Fence(context.Background(), as["cut"])
	defer cancel()
	p.Sever()
	severed := time.Now()
	var fenced, taken time.Time
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && taken.IsZero(); time.Sleep(20 * time.Millisecond) {
		if fenced.IsZero() && ctx.Err() != nil {
			fenced = time.Now()
		}
		if a, err := peer.Sync(context.Background()); err == nil && len(a.Held) == 4 {
			taken = time.Now()
		}
	}
	if fenced.IsZero() || taken.IsZero() || !fenced.Before(taken) {
		t.Fatalf("severed at %s: fence ended at %s, peer took the units at %s; the fence must end first",
			severed.Format(time.StampMilli), fenced.Format(time.StampMilli), taken.Format(time.StampMilli))
	}
	t.Logf("fence ended %s after the cut, the peer took over %s after", fenced.Sub(severed), taken.Sub(severed))
	if d := taken.Sub(fenced); d < ttl/4-50*time.Millisecond {
		t.Fatalf("take-over %s after the fence; want the quarter TTL margin (%s)", d, ttl/4)
	}
	if _, err := cut.Sync(context.Background()); err == nil {
		t.Fatal("sync without the API server succeeded")
	}
	p.Heal()
	var err error
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if _, err = cut.Sync(context.Background()); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("no sync after healing: %v", err)
	}
	settleAny(t, map[string]*coord.KubeCoordinator{"cut": cut, "peer": peer}, 4)
}

// A crashed engine restarted at once finds its member Lease still held:
// it waits until it has seen the Lease unrenewed for its duration.
func kubeRestart(t *testing.T, r *kubeRig) {
	p, via := r.proxy()
	r.member("phoenix", coord.Division{Partitions: 2}, via)
	p.Sever() // the old process can neither renew nor release: as dead
	start := time.Now()
	r.member("phoenix", coord.Division{Partitions: 2})
	if d := time.Since(start); d < ttl {
		t.Fatalf("the new registration took the Lease after %s, under its duration %s", d, ttl)
	}
}

func kubeSameID(t *testing.T, r *kubeRig) {
	r.member("twin", coord.Division{Partitions: 2})
	cfg := r.config("twin", coord.Division{Partitions: 2})
	cfg.RegisterWait = 3 * ttl
	_, err := coord.NewKube(context.Background(), cfg, r.access(""))
	if err == nil || !strings.Contains(err.Error(), "must never share an id") {
		t.Fatalf("second engine with the same id: %v", err)
	}
}

func kubeDivisions(t *testing.T, r *kubeRig) {
	a := r.member("a", coord.Division{Partitions: 8})
	r.member("b", coord.Division{Partitions: 16})
	if _, err := a.Sync(context.Background()); err == nil || !strings.Contains(err.Error(), "divides by") {
		t.Fatalf("sync with a disagreeing member: %v", err)
	}
}

func kubeStatic(t *testing.T, r *kubeRig) {
	static := func(id string, shards ...string) *coord.KubeCoordinator {
		cfg := r.config(id, coord.Division{})
		cfg.Static = coord.StaticUnits(shards, nil)
		c, err := coord.NewKube(context.Background(), cfg, r.access(""))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return c
	}
	a := static("a", "s1", "s2")
	if got := syncKube(t, a).Held; !slices.Equal(got, []string{"shard/s1", "shard/s2"}) {
		t.Fatalf("a holds %v", got)
	}
	b := static("b", "s2", "s3")
	if _, err := b.Sync(context.Background()); err == nil || !strings.Contains(err.Error(), "shard/s2 by a") {
		t.Fatalf("b shares shard s2 with a: %v", err)
	}
	all := static("all")
	if _, err := all.Sync(context.Background()); err == nil || !strings.Contains(err.Error(), "overlap") {
		t.Fatalf("whole-fleet engine beside sharded ones: %v", err)
	}
}

func syncKube(t *testing.T, c *coord.KubeCoordinator) coord.Assignment {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a, err := c.Sync(ctx)
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	return a
}
