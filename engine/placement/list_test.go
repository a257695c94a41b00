package placement

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// providersJSON is a GET /resource_providers answer shaped like the real
// Placement 8.0's at 1.39, links included.
func providersJSON(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"resource_providers": [`)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		u := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		fmt.Fprintf(&b, `{"uuid": %q, "name": %q, "generation": %d, "links": [`, u, u, i*7919)
		for j, rel := range []string{"self", "inventories", "usages", "aggregates", "traits", "allocations"} {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, `{"rel": %q, "href": "/resource_providers/%s/%s"}`, rel, u, rel)
		}
		fmt.Fprintf(&b, `], "parent_provider_uuid": null, "root_provider_uuid": %q}`, u)
	}
	b.WriteString("]}")
	return []byte(b.String())
}

func TestDecodeProviders(t *testing.T) {
	var l providerList
	if err := l.decodeFrom(bytes.NewReader(providersJSON(3))); err != nil {
		t.Fatal(err)
	}
	if len(l) != 3 || l[2].Generation != "15838" || l[1].Name != l[1].UUID || l[0].ParentUUID != nil {
		t.Fatalf("%+v", l)
	}
	for _, bad := range []string{`{"resource_providers": [{"uuid": "x"}]}`, `{"resource_providers": [{"uuid": "x", "generation": null}]}`,
		`{"resource_providers": {}}`, `[`, ``} {
		var l providerList
		if err := l.decodeFrom(strings.NewReader(bad)); err == nil {
			t.Errorf("%q decoded without error", bad)
		}
	}
}

func TestDecodeGenerations(t *testing.T) {
	m := generationMap{}
	if err := m.decodeFrom(bytes.NewReader(providersJSON(3))); err != nil {
		t.Fatal(err)
	}
	if len(m) != 3 || m["00000000-0000-4000-8000-000000000002"] != "15838" {
		t.Fatalf("%v", m)
	}
	twice := `{"resource_providers": [{"uuid": "x", "generation": 1}, {"uuid": "x", "generation": 2}]}`
	for _, bad := range []string{twice, `{"resource_providers": [{"uuid": "x"}]}`, `{"resource_providers": [{"uuid": "x", "generation": null}]}`,
		`{"resource_providers": {}}`, `[`, ``} {
		if err := (generationMap{}).decodeFrom(strings.NewReader(bad)); err == nil {
			t.Errorf("%q decoded without error", bad)
		}
	}
}

func FuzzDecodeProviders(f *testing.F) {
	f.Add(providersJSON(2))
	f.Add([]byte(`{"resource_providers": []}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var l providerList
		if l.decodeFrom(bytes.NewReader(b)) == nil {
			for _, p := range l {
				if p.UUID == "" || p.Generation == "" {
					t.Fatalf("accepted a provider without uuid or generation: %+v", p)
				}
			}
		}
	})
}

// BenchmarkDecodeProviders compares the token decoder with encoding/json
// on a 10,000-provider listing; generations_100k is what an idle cycle
// decodes at 100,000 (ProviderGenerations).
//
//	go test -run '^$' -bench DecodeProviders -benchtime 3x -count 3 ./engine/placement
func BenchmarkDecodeProviders(b *testing.B) {
	body := providersJSON(10000)
	big := providersJSON(100000)
	b.Run("generations_100k", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(big)))
		t := cpuTime()
		for b.Loop() {
			m := make(generationMap, 100000)
			if err := m.decodeFrom(bytes.NewReader(big)); err != nil || len(m) != 100000 {
				b.Fatal(err)
			}
		}
		// CPU time, not wall: the machine's load moves the latter.
		b.ReportMetric(float64((cpuTime()-t).Milliseconds())/float64(b.N), "cpu-ms/op")
	})
	// The floor of the same work: uuid and generation found by searching
	// the bytes, compared with the last cycle's (BenchmarkIdleListing's
	// minimal job without the fetch).
	b.Run("floor_100k", func(b *testing.B) { benchFloor(b, big, 100000) })
	b.Run("list_100k", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(big)))
		for b.Loop() {
			var l providerList
			if err := l.decodeFrom(bytes.NewReader(big)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("jsontext", func(b *testing.B) {
		for b.Loop() {
			var l providerList
			if err := l.decodeFrom(bytes.NewReader(body)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		for b.Loop() {
			var out struct {
				Providers []Provider `json:"resource_providers"`
			}
			if err := json.NewDecoder(bytes.NewReader(body)).Decode(&out); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// benchFloor times minimalScan over body, a listing of n providers.
func benchFloor(b *testing.B, body []byte, n int) {
	prev := make(generationMap, n)
	if err := prev.decodeFrom(bytes.NewReader(body)); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	t := cpuTime()
	for b.Loop() {
		if same, err := minimalScan(body, prev); err != nil || same != n {
			b.Fatal(same, err)
		}
	}
	b.ReportMetric(float64((cpuTime()-t).Milliseconds())/float64(b.N), "cpu-ms/op")
}

// cpuTime is this process's user+system time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Generations a listing repeats share one string; mostly new ones past
// the table's size stop being looked up. Each is the bytes listed either
// way.
func TestGenerationsShareRepeatsAndStopOnDistinct(t *testing.T) {
	g := newGenerations()
	a, b := g.of([]byte("7")), g.of([]byte("7"))
	if a != "7" || unsafe.StringData(string(a)) != unsafe.StringData(string(b)) {
		t.Fatalf("a repeated generation not shared: %q %q", a, b)
	}
	for i := range 3 * maxShared {
		v := []byte(strconv.Itoa(1_000_000 + i))
		if got := g.of(v); string(got) != string(v) {
			t.Fatalf("generation %d: %q, want %q", i, got, v)
		}
	}
	if g.shared != nil {
		t.Fatalf("still looked up after %d distinct generations (hits %d, misses %d)", 3*maxShared, g.hits, g.misses)
	}
	if got := g.of([]byte("7")); got != "7" {
		t.Fatalf("after the table stopped: %q", got)
	}
	// Repeats keep the table on, however many providers.
	g = newGenerations()
	for i := range 3 * maxShared {
		v := []byte(strconv.Itoa(i % 8))
		if i%2 == 1 {
			v = []byte(strconv.Itoa(1_000_000 + i))
		}
		if got := g.of(v); string(got) != string(v) {
			t.Fatalf("generation %d: %q, want %q", i, got, v)
		}
	}
	if g.shared == nil {
		t.Fatalf("repeats stopped the table (hits %d, misses %d)", g.hits, g.misses)
	}
}
