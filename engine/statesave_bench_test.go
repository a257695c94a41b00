package engine

import (
	"encoding/json"
	"io"
	"testing"
)

// BenchmarkWriteStateFile compares writing a state file of 100,000
// providers streamed (encodeState, what Save does) with json.Marshal of
// the whole file (what Save did): the CPU and the bytes allocated.
//
//	go test -run '^$' -bench WriteStateFile -benchmem -count 3 ./engine
func BenchmarkWriteStateFile(b *testing.B) {
	var f stateFile
	if err := json.Unmarshal(benchStateFile(b, 100_000), &f); err != nil {
		b.Fatal(err)
	}
	b.Run("stream", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := encodeState(io.Discard, f); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			body, err := json.Marshal(f)
			if err != nil {
				b.Fatal(err)
			}
			io.Discard.Write(body)
		}
	})
}
