package coord

import (
	"cmp"
	"encoding/binary"
	"hash/fnv"
	"slices"
)

// Assign gives each unit to one member by rendezvous (highest random
// weight) hashing with bounded loads: every member scores every unit, and
// the (unit, member) pairs are taken best score first, a unit going to the
// best-scoring member that is not yet full. A member holds at most
// capacity(units, members) units and at least least(units, members) (one
// as soon as there are as many units as members), so every live member
// holds a share:
// plain rendezvous gave both of 2 partitions to one of 2 engines in half
// of all namings, and always to the same one. A member that joins takes
// about 1/n of the units and one that leaves gives up its own, which move
// mostly to the members that score them next; the slack in capacity keeps
// other moves few (BenchmarkAssign, TestAssignSpread). Every engine
// computes the same answer from the same member list.
func Assign(members, units []string) map[string]string {
	out := make(map[string]string, len(units))
	ms := slices.Compact(slices.Sorted(slices.Values(members)))
	if len(ms) == 0 {
		return out
	}
	type pair struct {
		score   uint64
		unit, m int
	}
	pairs := make([]pair, 0, len(units)*len(ms))
	for u, unit := range units {
		for m, member := range ms {
			pairs = append(pairs, pair{score(member, unit), u, m})
		}
	}
	slices.SortFunc(pairs, func(a, b pair) int {
		if a.score != b.score {
			return cmp.Compare(b.score, a.score)
		}
		// Ties (vanishingly rare) go to the first member, then unit, in order.
		return cmp.Or(cmp.Compare(a.m, b.m), cmp.Compare(a.unit, b.unit))
	})
	limit := capacity(len(units), len(ms))
	held := make([][]int, len(ms)) // units by member
	owner := make([]int, len(units))
	for i := range owner {
		owner[i] = -1
	}
	for _, p := range pairs {
		if owner[p.unit] >= 0 || len(held[p.m]) >= limit {
			continue
		}
		owner[p.unit] = p.m
		held[p.m] = append(held[p.m], p.unit)
	}
	fillShort(held, ms, units, least(len(units), len(ms)))
	for m, us := range held {
		for _, u := range us {
			out[units[u]] = ms[m]
		}
	}
	return out
}

// fillShort gives each member holding fewer than want units, in member
// order, units of the member holding most: the one it scores highest.
// Capacity alone lets a few members take everything when units are few
// (8 partitions, 5 engines: 2+2+2+2+0).
func fillShort(held [][]int, ms, units []string, want int) {
	for m := range held {
		for len(held[m]) < want {
			donor := 0
			for d := range held {
				if len(held[d]) > len(held[donor]) {
					donor = d
				}
			}
			best := 0
			for i, u := range held[donor] {
				if score(ms[m], units[u]) > score(ms[m], units[held[donor][best]]) {
					best = i
				}
			}
			held[m] = append(held[m], held[donor][best])
			held[donor] = slices.Delete(held[donor], best, best+1)
		}
	}
}

// least is the fewest units a member holds: three quarters of the even
// share, and at least one while there are as many units as members.
func least(units, members int) int {
	if units < members {
		return 0
	}
	return max(1, units/members*3/4)
}

// capacity is the most units one member may hold: the even share rounded
// up, with a quarter more where that is at least one more unit (bounded
// loads: the slack lets most units stay where plain rendezvous puts them
// when a member joins or leaves).
func capacity(units, members int) int {
	even := (units + members - 1) / members
	return max(even, units*5/(4*members))
}

// score is a 64-bit hash of (member, unit), mixed so that similar names
// (engine-1, engine-2) still score independently.
func score(member, unit string) uint64 {
	h := fnv.New64a()
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(member)))
	h.Write(n[:])
	h.Write([]byte(member))
	h.Write([]byte(unit))
	return mix(h.Sum64())
}

// mix is the splitmix64 finaliser.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// Of returns the units assigned to member, sorted.
func Of(assignment map[string]string, member string) []string {
	var out []string
	for u, m := range assignment {
		if m == member {
			out = append(out, u)
		}
	}
	slices.Sort(out)
	return out
}
