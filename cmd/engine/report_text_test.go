package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/engine"
)

// once's text summary counts failed providers, as its report does.
func TestOnceSummaryCountsFailures(t *testing.T) {
	var out bytes.Buffer
	printReport(&out, engine.Report{Nodes: 4, Created: 1, Failed: 3})
	if !strings.Contains(out.String(), "failed 3;") {
		t.Fatalf("summary %q does not count the 3 failed providers", out.String())
	}
}
