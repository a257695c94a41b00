package ops

import (
	"testing"

	"github.com/rpengine/rpengine/engine"
)

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		name string
		r    engine.Report
		want Outcome
	}{
		{"clean", engine.Report{Unchanged: 5}, OK},
		{"one quarantined node", engine.Report{Unchanged: 5, Quarantined: 1, Errors: []engine.Error{{Message: "node x: class is empty"}}}, Partial},
		{"one failed sync of many", engine.Report{Updated: 9, Failed: 1, Errors: []engine.Error{{Message: "e"}}}, Partial},
		// A cycle cut by a Placement crash: 421 of 500 writes failed.
		{"most syncs failed", engine.Report{Updated: 79, Failed: 421, Errors: []engine.Error{{Message: "e"}}}, Failed},
		{"listing failed", engine.Report{Errors: []engine.Error{{Message: "list nodes: boom"}}}, Failed},
	} {
		if got := Classify(c.r); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
