//go:build wasip1

package guest

import (
	"os"
	"runtime"
	"runtime/debug"
)

// defaultGCPercent: a guest's GC runs on its single thread inside every
// call, and the host always sets GOMEMLIMIT below the hard memory cap, so
// a lazier pacer costs memory that is bounded anyway and saves time: the
// Ironic plugin's 10,000-node listing went from 73–101 ms to 58–64 ms at
// 400 (hostabi/RATIONALE.md). A GOGC the operator sets still wins.
const defaultGCPercent = 400

func init() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
}

// liveAfterGC is the heap left by the last collection collect ran.
var liveAfterGC uint64 = 4 << 20

// collect runs a full collection, between two calls, once the heap has
// doubled since the last one. A reactor's concurrent GC hardly ever
// finishes on its own: its mark workers are goroutines, and between calls
// nothing runs, while inside one the handler rarely yields. So the heap
// grew by each call's garbage until GOMEMLIMIT forced the work: an idle
// fake plugin at 2,000 nodes went from 89 to 455 MiB over 1,000 cycles
// of a 512 MiB limit. Collected here, it stays flat near twice its live
// data (hostabi/RATIONALE.md, "Collecting between calls").
func collect() {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	if m.HeapAlloc < 2*liveAfterGC {
		return
	}
	runtime.GC()
	runtime.ReadMemStats(&m)
	liveAfterGC = max(m.HeapAlloc, 4<<20)
}
