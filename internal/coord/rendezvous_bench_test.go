package coord

import (
	"slices"
	"testing"
)

// modulo is the simple alternative to rendezvous hashing: unit i of the
// sorted units goes to member hash(unit) mod n. It is here only to be
// measured against Assign.
func modulo(members, units []string) map[string]string {
	ms := slices.Clone(members)
	slices.Sort(ms)
	out := make(map[string]string, len(units))
	for _, u := range units {
		out[u] = ms[mix(score("", u))%uint64(len(ms))]
	}
	return out
}

// BenchmarkAssign reports, for 4,096 partitions, the cost of one Assign
// (every engine runs it at every Sync) and the fraction of partitions
// that change hands when an 8th engine joins 7: rendezvous hashing with
// bounded loads against hash-modulo-n. The bound costs a sort of every
// (unit, member) pair: ~11 ms at 16 members, was ~3 ms without it. Every moved partition is a claim released and acquired
// and an owner-marker flip on each of its providers.
func BenchmarkAssign(b *testing.B) {
	units := Division{Partitions: 4096}.Units()
	for _, c := range []struct {
		name   string
		assign func(members, units []string) map[string]string
	}{{"rendezvous", Assign}, {"modulo", modulo}} {
		b.Run(c.name, func(b *testing.B) {
			before, after := c.assign(members(7), units), c.assign(members(8), units)
			n, _ := moved(before, after)
			for b.Loop() {
				c.assign(members(16), units)
			}
			b.ReportMetric(100*float64(n)/float64(len(units)), "%moved-on-join")
		})
	}
}
