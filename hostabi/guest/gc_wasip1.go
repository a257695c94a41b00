//go:build wasip1

package guest

import (
	"os"
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
