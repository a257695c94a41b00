package placementfake_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// A conflict storm: another writer bumps the provider before each of the
// next three inventory writes; a client that re-reads wins on the fourth.
func TestConflictStorm(t *testing.T) {
	s := placementfake.New()
	defer s.Close()
	u := uuidN(1)
	create(t, s, u)
	storm := s.Inject(placementfake.Fault{Method: "PUT", Path: "/resource_providers/*/inventories", Conflict: true, Times: 3})

	var statuses []int
	for range 5 {
		status, m := putInventory(t, s, u, gen(t, s, u))
		statuses = append(statuses, status)
		if status == http.StatusOK {
			break
		}
		if code(m) != placementfake.CodeConcurrentUpdate {
			t.Fatalf("conflict storm: code %q, want %s", code(m), placementfake.CodeConcurrentUpdate)
		}
	}
	want := []int{409, 409, 409, 200}
	if !slices.Equal(statuses, want) || storm.Fired() != 3 {
		t.Errorf("statuses %v (fired %d), want %v (fired 3)", statuses, storm.Fired(), want)
	}
	if got := s.Find("PUT", "/resource_providers/*/inventories"); len(got) != 4 || got[0].Fault != "conflict" || got[3].Fault != "" {
		t.Errorf("log: %+v", got)
	}
}

func TestFaultEveryNth(t *testing.T) {
	s := placementfake.New()
	defer s.Close()
	f := s.Inject(placementfake.Fault{Method: "GET", Path: "/resource_providers", Every: 3, Status: 503})
	var got []int
	for range 7 {
		status, _ := do(t, s, "GET", "/resource_providers", nil)
		got = append(got, status)
	}
	if want := []int{200, 200, 503, 200, 200, 503, 200}; !slices.Equal(got, want) {
		t.Errorf("statuses %v, want %v", got, want)
	}
	// Other paths and methods are not affected.
	if status, _ := do(t, s, "GET", "/traits", nil); status != 200 {
		t.Errorf("GET /traits: %d", status)
	}
	f.Remove()
	for range 3 {
		if status, _ := do(t, s, "GET", "/resource_providers", nil); status != 200 {
			t.Fatalf("after Remove: %d", status)
		}
	}
	if f.Fired() != 2 {
		t.Errorf("fired %d, want 2", f.Fired())
	}
}

func TestFaultStatusBody(t *testing.T) {
	s := placementfake.New()
	defer s.Close()
	s.Inject(placementfake.Fault{Status: 500, Times: 1})
	status, m := do(t, s, "GET", "/resource_providers", nil)
	if status != 500 || code(m) != placementfake.CodeDefault {
		t.Errorf("injected 500: %d %v", status, m)
	}
	if status, _ := do(t, s, "GET", "/resource_providers", nil); status != 200 {
		t.Errorf("Times: 1 fired again: %d", status)
	}
}

func TestFaultDrop(t *testing.T) {
	s := placementfake.New()
	defer s.Close()
	s.Inject(placementfake.Fault{Drop: true, Times: 1})
	if _, _, err := try(s, "GET", "/resource_providers", nil); err == nil {
		t.Fatal("dropped request returned no error")
	}
	if status, _ := do(t, s, "GET", "/resource_providers", nil); status != 200 {
		t.Errorf("after the drop: %d", status)
	}
	if log := s.Requests(); len(log) != 2 || log[0].Status != 0 || log[0].Fault != "drop" {
		t.Errorf("log: %+v", log)
	}
}

// The delay is exact on the bubble's clock, touches only the matching
// path, and ends early when the client gives up.
func TestFaultDelay(t *testing.T) {
	s := placementfake.New()
	defer s.Close()
	s.Inject(placementfake.Fault{Path: "/traits", Delay: 150 * time.Millisecond})
	synctest.Test(t, func(t *testing.T) {
		for _, c := range []struct {
			path    string
			giveUp  time.Duration // 0: the client waits
			took    time.Duration
			answers bool
		}{
			{"/traits", 0, 150 * time.Millisecond, true},
			{"/resource_providers", 0, 0, true},
			{"/traits", 40 * time.Millisecond, 40 * time.Millisecond, false},
		} {
			ctx, cancel := context.WithCancel(t.Context())
			if c.giveUp > 0 {
				time.AfterFunc(c.giveUp, cancel)
			}
			req := httptest.NewRequestWithContext(ctx, "GET", c.path, nil)
			req.Header.Set("X-Auth-Token", "admin")
			rec := httptest.NewRecorder()
			start := time.Now()
			s.ServeHTTP(rec, req)
			cancel()
			if took := time.Since(start); took != c.took {
				t.Errorf("GET %s (client gives up after %s) took %s; want %s", c.path, c.giveUp, took, c.took)
			}
			if c.answers && rec.Code != http.StatusOK {
				t.Errorf("GET %s: %d", c.path, rec.Code)
			}
		}
	})
}

func TestFaultVanish(t *testing.T) {
	s := placementfake.New()
	defer s.Close()
	u := uuidN(1)
	g := create(t, s, u)
	s.Inject(placementfake.Fault{Method: "PUT", Path: "/resource_providers/" + u + "/inventories", Vanish: true})
	status, _ := putInventory(t, s, u, g)
	if status != http.StatusNotFound {
		t.Errorf("PUT on a vanished provider: %d, want 404", status)
	}
	if _, ok := s.Provider(u); ok {
		t.Error("provider still there")
	}
}

// The "another writer" helpers each move the generation and change state.
func TestOtherWriter(t *testing.T) {
	s := placementfake.New()
	defer s.Close()
	u := uuidN(1)
	g := create(t, s, u)
	steps := []struct {
		name  string
		write func() error
	}{
		{"BumpGeneration", func() error { return s.BumpGeneration(u) }},
		{"AddTrait", func() error { return s.AddTrait(u, "CUSTOM_OTHER") }},
		{"AddAggregate", func() error { return s.AddAggregate(u, uuidN(99)) }},
	}
	for _, st := range steps {
		if err := st.write(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if now := gen(t, s, u); now == g {
			t.Errorf("%s did not bump the generation", st.name)
		} else {
			g = now
		}
	}
	status, m := putInventory(t, s, u, g)
	if status != 200 {
		t.Fatalf("inventory: %d %v", status, m)
	}
	if err := s.Allocate(uuidN(50), u, map[string]int64{"VCPU": 2}); err != nil {
		t.Fatal(err)
	}
	if status, m := do(t, s, "DELETE", "/resource_providers/"+u, nil); status != 409 || code(m) != placementfake.CodeProviderInUse {
		t.Errorf("DELETE allocated provider: %d %v", status, m)
	}
	p, _ := s.Provider(u)
	if p.Usages["VCPU"] != 2 || len(p.Traits) != 1 || len(p.Aggregates) != 1 {
		t.Errorf("state: %+v", p)
	}
	if err := s.DeleteProvider(u); err != nil {
		t.Fatal(err)
	}
	if status, _ := do(t, s, "GET", "/resource_providers/"+u, nil); status != 404 {
		t.Errorf("GET after DeleteProvider: %d", status)
	}
	if err := s.BumpGeneration(u); err != placementfake.ErrNoProvider {
		t.Errorf("BumpGeneration on a deleted provider: %v", err)
	}
	if err := s.Allocate(uuidN(51), uuidN(2), map[string]int64{"VCPU": 1}); err == nil {
		t.Error("Allocate on an unknown provider succeeded")
	}
}

// Faults, other writers and clients may all run at once (run with -race).
func TestConcurrentUse(t *testing.T) {
	s := placementfake.New()
	defer s.Close()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			u := uuidN(w)
			create(t, s, u)
			for range 20 {
				putInventory(t, s, u, gen(t, s, u))
				_ = s.BumpGeneration(u)
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			f := s.Inject(placementfake.Fault{Conflict: true, Every: 2})
			s.Requests()
			f.Remove()
		}
	})
	wg.Wait()
	if unknown := s.SentUnknownGenerations(); len(unknown) != 0 {
		t.Errorf("unknown generations: %v", unknown)
	}
}
