package coord_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/coord"
)

// The record round-trips, two members writing at once merge (one bucket
// object, resourceVersion preconditions), and a delete removes an entry.
func kubeRecord(t *testing.T, r *kubeRig) {
	div := coord.Division{Partitions: 2}
	a, b := r.member("a", div), r.member("b", div)
	as := settleAny(t, map[string]*coord.KubeCoordinator{"a": a, "b": b}, 2)
	ctx := context.Background()
	ra, rb := a.Records(as["a"], "P1"), b.Records(as["b"], "P1")
	want := map[string][]byte{}
	putA, putB := map[string][]byte{}, map[string][]byte{}
	for i := range 300 {
		u := fmt.Sprintf("00000000-0000-0000-0000-%012d", i)
		want[u] = []byte(fmt.Sprintf(`{"by":"x","i":%d}`, i))
		if i%2 == 0 {
			putA[u] = want[u]
		} else {
			putB[u] = want[u]
		}
	}
	errs := make(chan error, 2)
	go func() { errs <- ra.Store(ctx, putA, nil) }()
	go func() { errs <- rb.Store(ctx, putB, nil) }()
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("store: %v", err)
		}
	}
	got, err := a.Records(as["a"], "P1").Load(ctx)
	if err != nil || !maps.EqualFunc(got, want, func(x, y []byte) bool { return string(x) == string(y) }) {
		t.Fatalf("load after two concurrent writers: %d entries (want %d), %v", len(got), len(want), err)
	}
	gone := "00000000-0000-0000-0000-000000000000"
	if err := ra.Store(ctx, nil, []string{gone}); err != nil {
		t.Fatal(err)
	}
	got, _ = rb.Load(ctx)
	if _, ok := got[gone]; ok || len(got) != 299 {
		t.Fatalf("after a delete: %d entries, deleted one present %v", len(got), ok)
	}
	// b rewrites an entry a wrote and a does not know it: a's delete of
	// it leaves b's entry alone.
	taken := "00000000-0000-0000-0000-000000000002"
	if err := rb.Store(ctx, map[string][]byte{taken: []byte(`{"by":"b"}`)}, nil); err != nil {
		t.Fatal(err)
	}
	if err := ra.Store(ctx, nil, []string{taken}); err != nil {
		t.Fatal(err)
	}
	if got, _ = rb.Load(ctx); string(got[taken]) != `{"by":"b"}` {
		t.Fatalf("a's delete removed the entry b wrote since: %q", got[taken])
	}
	if other, _ := b.Records(as["b"], "P2").Load(ctx); len(other) != 0 {
		t.Fatalf("another Placement's record has %d entries", len(other))
	}
	id, err := a.RecordPlacement(ctx, "CUSTOM_ONE", 0)
	if err != nil || id != "CUSTOM_ONE" {
		t.Fatalf("record placement: %q %v", id, err)
	}
	if id, err := b.RecordPlacement(ctx, "CUSTOM_TWO", 0); err != nil || id != "CUSTOM_ONE" {
		t.Fatalf("second engine recording: %q %v; want the first's", id, err)
	}
}

// A member whose claims were taken over while it was cut off cannot
// write the record when it is back: it re-reads its claims first.
func kubeRecordFenced(t *testing.T, r *kubeRig) {
	div := coord.Division{Partitions: 8}
	p, via := r.proxy()
	old := r.member("old", div, via)
	peer := r.member("peer", div)
	as := settleAny(t, map[string]*coord.KubeCoordinator{"old": old, "peer": peer}, 8)
	if len(as["old"].Held) == 0 {
		t.Fatal("rendezvous gave the old member nothing") // fixed names: does not happen
	}
	rec := old.Records(as["old"], "P")
	ctx := context.Background()
	if err := rec.Store(ctx, map[string][]byte{"u1": []byte("1")}, nil); err != nil {
		t.Fatalf("store while holding: %v", err)
	}
	p.Sever()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if a, err := peer.Sync(ctx); err == nil && len(a.Held) == 8 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("peer did not take over")
		}
	}
	p.Heal()
	err := rec.Store(ctx, map[string][]byte{"u1": []byte("stale")}, nil)
	if !errors.Is(err, coord.ErrRecordFenced) {
		t.Fatalf("store after losing the claims: %v; want ErrRecordFenced", err)
	}
	got, _ := peer.Records(as["peer"], "P").Load(ctx)
	if string(got["u1"]) != "1" {
		t.Fatalf("entry u1 = %q after the fenced write; want it unchanged", got["u1"])
	}
}

// When nothing changes, a Sync costs one request (the list of the
// fleet's Leases); renewals cost four a TTL whatever the cycles do.
func kubeRequests(t *testing.T, r *kubeRig) {
	div := coord.Division{Partitions: 64}
	cs := map[string]*coord.KubeCoordinator{}
	for _, id := range []string{"e1", "e2", "e3"} {
		cs[id] = r.member(id, div)
	}
	settleAny(t, cs, 64)
	const cycles = 20
	before := map[string]int64{}
	for id, c := range cs {
		before[id] = c.Requests()
	}
	start := time.Now()
	for range cycles {
		for id, c := range cs {
			if a := syncKube(t, c); len(a.Acquired)+len(a.Released) > 0 {
				t.Fatalf("%s moved claims in a steady group: %+v", id, a)
			}
		}
	}
	elapsed := time.Since(start)
	renewals := float64(elapsed) / float64(ttl/4)
	for id, c := range cs {
		n := c.Requests() - before[id]
		perSync := (float64(n) - renewals) / cycles
		t.Logf("FIGURE kube requests: %s sent %d in %d steady syncs over %s (64 units): %.2f a sync beside %.1f renewals",
			id, n, cycles, elapsed.Round(time.Millisecond), perSync, renewals)
		if perSync > 1.5 {
			t.Fatalf("%s: %.2f requests a steady sync; want 1 (one list)", id, perSync)
		}
	}
}

// 200 rounds of syncs while members join and leave (every 25 rounds one
// joins or one leaves): at no round is a unit held
// by two members, and the requests a member sends per sync stay O(1)
// (the FIGURE line: the mean over all syncs, moves included).
func kubeSoak(t *testing.T, r *kubeRig) {
	div := coord.Division{Partitions: 32}
	live := map[string]*coord.KubeCoordinator{}
	var sent, syncs int64
	next := 0
	join := func() {
		next++
		id := fmt.Sprintf("s%d", next)
		live[id] = r.member(id, div)
	}
	for range 3 {
		join()
	}
	leave := func() {
		for _, id := range sortedIDs(live) {
			live[id].Close()
			delete(live, id)
			return
		}
	}
	for round := range 200 {
		switch {
		case round > 0 && round%50 == 0:
			leave()
		case round > 0 && round%25 == 0:
			join()
		}
		owner := map[string]string{}
		for _, id := range sortedIDs(live) {
			c := live[id]
			before := c.Requests()
			a, err := c.Sync(context.Background())
			sent, syncs = sent+c.Requests()-before, syncs+1
			if err != nil {
				continue // a newcomer's first TTL, or a late renewal: holds nothing
			}
			for _, u := range a.Held {
				if o, dup := owner[u]; dup {
					t.Fatalf("round %d: %s held by %s and %s", round, u, o, id)
				}
				owner[u] = id
			}
		}
	}
	t.Logf("FIGURE kube soak: %d syncs over 200 rounds with members joining and leaving: %.2f requests a sync (a renewal sent during one counts too)",
		syncs, float64(sent)/float64(syncs))
	if float64(sent)/float64(syncs) > 3 {
		t.Fatalf("%.2f requests a sync under churn; want O(1)", float64(sent)/float64(syncs))
	}
}

func sortedIDs(m map[string]*coord.KubeCoordinator) []string {
	out := make([]string, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}
