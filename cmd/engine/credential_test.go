package main

import (
	"context"
	"log/slog"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/ironictest"
)

// Keystone revokes the engine's token while its password
// stays valid. The plugin lists nodes before the engine talks to
// Placement, so only the gate sees the 401: it must log in again and
// retry, and the cycle must not fail (it failed 13 times in a row when
// the host only refreshed tokens near their expiry).
func TestRevokedTokenCostsThePluginNoCycleE2E(t *testing.T) {
	ironicURL := ironictest.StartReal(t)
	ic := ironictest.NewClient(t, ironicURL)
	u := ic.Create(t, ironictest.Spec{Name: "revoked-0", ResourceClass: "gold"})
	ic.Available(t, u)

	ks, fake := keystoneCloud(t, ironicURL)
	cfg := ironicConfig(t, "ks-revoke", ks)
	ctx := context.Background()
	w, err := setup(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer w.close(ctx)
	if r := w.eng.Cycle(ctx); len(r.Errors) > 0 || r.Created != 1 {
		t.Fatalf("first cycle: %+v", r)
	}
	issued := len(ks.Issued())
	failed := 0
	for i := range 3 {
		ks.Revoke()
		if r := w.eng.Cycle(ctx); len(r.Errors) > 0 {
			failed++
			t.Errorf("cycle %d after the revocation failed: %v", i+2, r.Errors)
		}
	}
	if failed > 0 || len(ks.Issued()) != issued+3 {
		t.Fatalf("%d failed cycles, %d new tokens (want 0 and 3: one login per revocation)", failed, len(ks.Issued())-issued)
	}
	if _, ok := fake.Provider(u); !ok {
		t.Fatalf("no provider for node %s", u)
	}
}
