package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/coord"
	"github.com/rpengine/rpengine/internal/testing/etcdtest"
)

// Spellings of one endpoint give one key; other endpoints do not.
func TestPlacementKeyIgnoresSpelling(t *testing.T) {
	same := []string{"http://10.0.0.5:8778", "HTTP://10.0.0.5:8778/", "http://10.0.0.5:8778//", " http://10.0.0.5:8778/?x=1#f"}
	for _, s := range same {
		if got := placementKey(s); got != "http://10.0.0.5:8778" {
			t.Errorf("placementKey(%q) = %q", s, got)
		}
	}
	pairs := [][2]string{
		{"https://Placement.Example:443/placement/", "https://placement.example/placement"},
		{"http://[::1]:80/", "http://[::1]"},
		{"http://p/a/../placement", "http://p/placement"},
	}
	for _, p := range pairs {
		if got := placementKey(p[0]); got != p[1] {
			t.Errorf("placementKey(%q) = %q, want %q", p[0], got, p[1])
		}
	}
	for _, other := range []string{"http://10.0.0.6:8778", "http://10.0.0.5:8779", "https://10.0.0.5:8778", "http://10.0.0.5:8778/other"} {
		if placementKey(other) == "http://10.0.0.5:8778" {
			t.Errorf("%q taken for the same Placement", other)
		}
	}
}

// A default state file named after the endpoint as an older version
// spelt it is renamed and read, record and all; a file of another
// Placement is not.
func TestLegacyStateFileIsAdopted(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("STATE_DIRECTORY", dir)
	spelt := "http://10.0.0.5:8778/"
	legacy := defaultStateFile("e1", spelt)
	body := `{"version":1,"key":"` + spelt + ` e1","round":3,"providers":{"u":{"Managed":{"Traits":["CUSTOM_GPU"]}}}}`
	if err := os.WriteFile(legacy, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	path := statePath("", "e1", spelt)
	if path == legacy || filepath.Dir(path) != dir {
		t.Fatalf("paths %s, %s", path, legacy)
	}
	adoptLegacyState(path, legacy, slog.New(slog.DiscardHandler))
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("not renamed: %v", err)
	}
	st, err := engine.LoadState(path, placementKey(spelt)+" e1", spelt+" e1")
	if r, ok := st.Record("u"); err != nil || !ok || len(r.Managed.Traits) != 1 {
		t.Fatalf("renamed file: %v, record %+v", err, r)
	}
	copyPath := filepath.Join(t.TempDir(), "copy.json")
	if err := os.WriteFile(copyPath, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	other, err := engine.LoadState(copyPath, "http://10.0.0.6:8778 e1", "http://10.0.0.6:8778/ e1")
	if _, ok := other.Record("u"); ok || err == nil || errors.Is(err, engine.ErrStateUnusable) {
		t.Fatalf("another Placement's engine read the record (err %v)", err)
	}
}

// fakeTraits is a Placement's trait list, for placementIdentity.
type fakeTraits struct{ traits []string }

func (f *fakeTraits) TraitsStartingWith(_ context.Context, prefix string) ([]string, error) {
	var out []string
	for _, t := range f.traits {
		if strings.HasPrefix(t, prefix) {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out, nil
}

func (f *fakeTraits) EnsureTrait(_ context.Context, name string) error {
	if !slices.Contains(f.traits, name) {
		f.traits = append(f.traits, name)
	}
	return nil
}

// The record's key follows the Placement: the same one however reached
// keeps its identity; a really different one gets its own (a clean
// record), and going back finds the first again.
func TestPlacementIdentityFollowsThePlacement(t *testing.T) {
	url := etcdtest.Start(t)
	c, err := coord.New(context.Background(), coord.Config{Endpoints: []string{url}, Prefix: "/ident/", Member: "m",
		OwnerTrait: engine.OwnerTrait("m"), TTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	log := slog.New(slog.DiscardHandler)
	a, b := &fakeTraits{traits: []string{"CUSTOM_X"}}, &fakeTraits{}
	ctx := context.Background()
	first, err := placementIdentity(ctx, c, a, log)
	if err != nil || !strings.HasPrefix(first, identityPrefix) || !slices.Contains(a.traits, first) {
		t.Fatalf("first identity %q (%v), traits %v", first, err, a.traits)
	}
	if again, _ := placementIdentity(ctx, c, a, log); again != first || len(a.traits) != 2 {
		t.Fatalf("same Placement: %q, want %q; traits %v", again, first, a.traits)
	}
	other, err := placementIdentity(ctx, c, b, log)
	if err != nil || other == first || !slices.Contains(b.traits, other) {
		t.Fatalf("another Placement got %q (%v), the first was %q", other, err, first)
	}
	if back, _ := placementIdentity(ctx, c, a, log); back != first {
		t.Fatalf("back on the first Placement: %q, want %q", back, first)
	}
	// Two engines minting at once: the first recorded wins for both.
	_, rev, _ := c.RecordedPlacement(ctx)
	if won, err := c.RecordPlacement(ctx, "CUSTOM_RPENGINE_PLACEMENT_LATE", rev-1); err != nil || won != first {
		t.Fatalf("a late mint recorded %q (%v), want the winner %q", won, err, first)
	}
}
