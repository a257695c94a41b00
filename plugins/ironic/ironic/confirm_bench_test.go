package ironic

import (
	"testing"

	"github.com/rpengine/rpengine/plugins/ironic/internal/fakeironic"
)

// BenchmarkConfirmDeleted10k is the proof request of a shrunk scope:
// 10,000 nodes the engine no longer lists, all still in Ironic (out of
// scope). ironic-requests/call counts the requests Ironic serves for it
// (one GET per node before the paged uuid-only listing: 10,000).
//
//	go test -run '^$' -bench ConfirmDeleted10k -benchtime 3x ./plugins/ironic/ironic
func BenchmarkConfirmDeleted10k(b *testing.B) {
	nodes := fakeironic.Generate(10000, 29)
	fake := fakeironic.New(nodes, 82)
	c := start(b, fake, Config{}, nil)
	asked := uuids(nodes)
	if _, err := c.negotiate(); err != nil {
		b.Fatal(err)
	}
	served := len(fake.Requests())
	b.ResetTimer()
	for b.Loop() {
		if _, present, err := c.ConfirmDeleted(asked); err != nil || len(present) != len(asked) {
			b.Fatalf("%d present, %v", len(present), err)
		}
	}
	b.ReportMetric(float64(len(fake.Requests())-served)/float64(b.N), "ironic-requests/call")
}
