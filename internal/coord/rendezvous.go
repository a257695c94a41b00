package coord

import (
	"encoding/binary"
	"hash/fnv"
	"slices"
)

// Assign gives each unit to one member by rendezvous (highest random
// weight) hashing: every member scores every unit and the highest score
// wins. A member that joins takes only the units it now wins, about 1/n of
// them, and one that leaves gives up only its own; no other unit moves.
// Every engine computes the same answer from the same member list.
func Assign(members, units []string) map[string]string {
	out := make(map[string]string, len(units))
	if len(members) == 0 {
		return out
	}
	ms := slices.Clone(members)
	slices.Sort(ms)
	for _, u := range units {
		best, bestScore := "", uint64(0)
		for _, m := range ms {
			// Ties (vanishingly rare) go to the first member in order.
			if s := score(m, u); best == "" || s > bestScore {
				best, bestScore = m, s
			}
		}
		out[u] = best
	}
	return out
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
