package coord

import (
	"fmt"
	"maps"
	"slices"
	"testing"
)

func members(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("engine-%d", i+1)
	}
	return out
}

func TestAssignIsDeterministicAndOrderFree(t *testing.T) {
	units := Division{Partitions: 64}.Units()
	a := Assign([]string{"b", "a", "c"}, units)
	b := Assign([]string{"c", "b", "a"}, units)
	if !maps.Equal(a, b) || len(a) != 64 {
		t.Fatalf("assignment depends on member order: %v vs %v", a, b)
	}
	if got := Assign(nil, units); len(got) != 0 {
		t.Fatalf("no members, got %v", got)
	}
}

// moved counts units whose member differs between a and b.
func moved(a, b map[string]string) (n int, to map[string]int) {
	to = map[string]int{}
	for u, m := range a {
		if b[u] != m {
			n++
			to[b[u]]++
		}
	}
	return n, to
}

func TestAssignMovesOnlyWhatItMust(t *testing.T) {
	units := Division{Partitions: 1024}.Units()
	for _, n := range []int{1, 2, 3, 5, 8} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			before := Assign(members(n), units)
			// A member joins: only units it now wins move, all of them to it.
			joined := append(members(n), "newcomer")
			after := Assign(joined, units)
			count, to := moved(before, after)
			if len(to) > 1 || (count > 0 && to["newcomer"] != count) {
				t.Fatalf("join moved units to old members: %v", to)
			}
			checkFraction(t, "join", count, len(units), n+1)

			// A member leaves: only its units move.
			leaver := members(n)[0]
			left := Assign(members(n)[1:], units)
			count, _ = moved(before, left)
			if own := len(Of(before, leaver)); count != own {
				t.Fatalf("leave moved %d units, the leaver held %d", count, own)
			}
			if n > 1 {
				checkFraction(t, "leave", count, len(units), n)
			}
		})
	}
}

// checkFraction wants about units/n moves: within a factor of 1.5 either
// way, which 1024 units keep far from chance.
func checkFraction(t *testing.T, what string, count, units, n int) {
	t.Helper()
	want := float64(units) / float64(n)
	if float64(count) < want/1.5 || float64(count) > want*1.5 {
		t.Errorf("%s with %d members moved %d of %d units, want about %.0f", what, n, count, units, want)
	}
}

func TestAssignSpreadsEvenly(t *testing.T) {
	units := Division{Partitions: 1024}.Units()
	a := Assign(members(4), units)
	for _, m := range members(4) {
		if got := len(Of(a, m)); got < 256/2 || got > 256*3/2 {
			t.Errorf("%s holds %d of 1024 units, want about 256", m, got)
		}
	}
}

func TestUnits(t *testing.T) {
	d := Division{Partitions: 3}
	if got := d.Units(); !slices.Equal(got, []string{"partition/3/0000", "partition/3/0001", "partition/3/0002"}) {
		t.Fatalf("units %v", got)
	}
	if got := Partitions(d.Units()[1:]); !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("partitions %v", got)
	}
	s := Division{Shards: []string{"b", "a", "b"}}
	if s.String() != "shards=a,b" || !slices.Equal(Shards(s.Units()), []string{"a", "b"}) {
		t.Fatalf("shards %s %v", s, s.Units())
	}
	if got := StaticUnits(nil, nil); !slices.Equal(got, []string{"all"}) {
		t.Fatalf("static all %v", got)
	}
	if got := StaticUnits([]string{"s1"}, []string{"g1"}); !slices.Equal(got, []string{"group/g1", "shard/s1"}) {
		t.Fatalf("static %v", got)
	}
	if w := (Division{Partitions: 4, Within: "shards=a"}); w.String() != "partitions=4 within shards=a" {
		t.Fatalf("within: %s", w)
	}
	if (Division{}).Dynamic() || (Division{}).String() != "static" {
		t.Fatal("zero division is static")
	}
}

func TestOverlapYieldsTheNewerClaim(t *testing.T) {
	claims := map[string]claim{
		"all":     {holder: "a", created: 5},
		"shard/x": {holder: "b", created: 9},
	}
	if got := overlapping(claims, "b"); !slices.Equal(got, []string{"shard/x"}) {
		t.Fatalf("b must yield, got %v", got)
	}
	if got := overlapping(claims, "a"); len(got) != 0 {
		t.Fatalf("a is older and keeps its claim, got %v", got)
	}
	claims["all"] = claim{holder: "a", created: 12}
	if got := overlapping(claims, "a"); !slices.Equal(got, []string{"all"}) {
		t.Fatalf("a must yield, got %v", got)
	}
}

// TestAssignSpread checks, for 2–8 engines and 8–4,096 partitions and
// several namings of the engines, that every engine holds a share: at
// most capacity, so at least what the others leave, and never none. It
// logs the spread (fewest–most units an engine holds, over the namings);
// `go test -v -run TestAssignSpread ./internal/coord/` prints the table.
func TestAssignSpread(t *testing.T) {
	for _, parts := range []int{2, 8, 64, 512, 4096} {
		units := Division{Partitions: parts}.Units()
		for n := 2; n <= 8; n++ {
			lo, hi := parts, 0
			for naming := range 20 {
				ms := make([]string, n)
				for i := range ms {
					ms[i] = fmt.Sprintf("rack-%d-%d", naming, i)
				}
				a := Assign(ms, units)
				for _, m := range ms {
					got := len(Of(a, m))
					lo, hi = min(lo, got), max(hi, got)
				}
			}
			limit := capacity(parts, n)
			floor := max(parts-(n-1)*limit, least(parts, n))
			if hi > limit || lo < floor || (parts >= n && lo == 0) {
				t.Errorf("%d partitions over %d engines: %d–%d units an engine, want %d–%d", parts, n, lo, hi, floor, limit)
			}
			t.Logf("SPREAD partitions=%d engines=%d even=%.1f units_per_engine=%d–%d", parts, n, float64(parts)/float64(n), lo, hi)
		}
	}
}
