package placementfake_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// Generations are opaque on purpose: never 0, never +1, sometimes beyond
// float64's exact range, and reproducible per seed.
func TestGenerationsAreOpaque(t *testing.T) {
	s := placementfake.New(placementfake.WithSeed(7))
	defer s.Close()
	var huge int
	for i := range 200 {
		u := uuidN(i)
		g := mustInt(t, create(t, s, u))
		if g == 0 {
			t.Fatalf("provider %d starts at generation 0", i)
		}
		if g > 1<<53 {
			huge++
		}
		status, m := putInventory(t, s, u, json.Number(strconv.FormatInt(g, 10)))
		if status != http.StatusOK {
			t.Fatalf("PUT inventory: %d %v", status, m)
		}
		next := mustInt(t, m["resource_provider_generation"].(json.Number))
		if next == g || next == g+1 {
			t.Fatalf("bump went %d -> %d", g, next)
		}
	}
	if huge == 0 {
		t.Error("no generation above 2^53 in 400 draws")
	}
}

func TestGenerationsReproducible(t *testing.T) {
	first := func(seed int64) []json.Number {
		s := placementfake.New(placementfake.WithSeed(seed))
		defer s.Close()
		var out []json.Number
		for i := range 5 {
			out = append(out, create(t, s, uuidN(i)))
		}
		return out
	}
	if a, b := first(3), first(3); !slices.Equal(a, b) {
		t.Errorf("same seed, different generations: %v %v", a, b)
	}
	if a, b := first(3), first(4); slices.Equal(a, b) {
		t.Errorf("different seeds, same generations: %v", a)
	}
}

// A client that counts generations, or sends them through float64, is
// caught by the log.
func TestSentUnknownGenerations(t *testing.T) {
	s := placementfake.New()
	defer s.Close()
	u := uuidN(1)
	g := mustInt(t, create(t, s, u))

	putInventory(t, s, u, json.Number(strconv.FormatInt(g+1, 10))) // counted
	asFloat := json.Number(strconv.FormatFloat(float64(g), 'g', -1, 64))
	status, _ := putInventory(t, s, u, asFloat) // float64 round trip
	putInventory(t, s, u, json.Number(strconv.FormatInt(g, 10)))

	want := []string{strconv.FormatInt(g+1, 10)}
	if asFloat != json.Number(strconv.FormatInt(g, 10)) {
		want = append(want, string(asFloat))
		if status != http.StatusBadRequest {
			t.Errorf("float generation %s: status %d, want 400 (not an integer)", asFloat, status)
		}
	}
	if got := s.SentUnknownGenerations(); !slices.Equal(got, want) {
		t.Errorf("SentUnknownGenerations() = %v, want %v", got, want)
	}
	log := s.Requests()
	if last := log[len(log)-1]; last.Status != 200 || len(last.Generations) != 1 || len(last.Unknown) != 0 {
		t.Errorf("last entry: %+v", last)
	}
	s.ResetRequests()
	if len(s.Requests()) != 0 || len(s.SentUnknownGenerations()) != 0 {
		t.Error("ResetRequests left entries")
	}
}

func TestRequestLog(t *testing.T) {
	s := placementfake.New()
	defer s.Close()
	u := uuidN(1)
	g := create(t, s, u)
	putInventory(t, s, u, g)
	do(t, s, "GET", "/resource_providers?name=rp-"+u, nil)

	log := s.Requests()
	if len(log) != 3 {
		t.Fatalf("log has %d entries: %+v", len(log), log)
	}
	if e := log[1]; e.Method != "PUT" || e.Path != "/resource_providers/"+u+"/inventories" || e.Status != 200 ||
		!slices.Equal(e.Generations, []string{string(g)}) || len(e.Body) == 0 {
		t.Errorf("PUT entry: %+v", e)
	}
	if e := log[2]; e.Query != "name=rp-"+u {
		t.Errorf("GET entry query %q", e.Query)
	}
	if got := s.Find("DELETE", "/resource_providers/*/inventories"); len(got) != 0 {
		t.Errorf("Find DELETE: %+v", got)
	}
	if got := s.Find("", "/resource_providers/*/inventories"); len(got) != 1 {
		t.Errorf("Find any method: %+v", got)
	}
}

func mustInt(t *testing.T, n json.Number) int64 {
	t.Helper()
	v, err := n.Int64()
	if err != nil {
		t.Fatalf("generation %s: %v", n, err)
	}
	return v
}
