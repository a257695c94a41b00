package wasmhost

import (
	"testing"

	"github.com/rpengine/rpengine/hostabi"
)

// BenchmarkRefs10k is the engine's side of an answer by reference: the
// 10,000 nodes of 10 kept pages built from the frames (decodeNodeRefs).
// Rerun: go test -run '^$' -bench Refs10k -benchmem ./internal/wasmhost/
func BenchmarkRefs10k(b *testing.B) {
	all := sampleNodes(10000)
	var pages [][]hostabi.Node
	for i := range 10 {
		pages = append(pages, all[i*1000:(i+1)*1000])
	}
	k := keepPages(b, 1<<30, pages...)
	var refs hostabi.NodeRefs
	refs.Fields = refFields
	for p := range 10 {
		for i := range 1000 {
			refs.Add(uint32(p+1), uint32(i))
		}
	}
	answer := hostabi.AppendNodeRefs(nil, refs)
	b.ReportAllocs()
	for b.Loop() {
		if nodes, err := readRefs(answer, Limits{}, 1<<30, k); err != nil || len(nodes) != 10000 {
			b.Fatal(len(nodes), err)
		}
	}
}
