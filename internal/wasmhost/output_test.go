package wasmhost_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// What a plugin prints reaches the engine only as attributes of records
// tagged with its name, cut at 512 bytes and 50 lines per call.
func TestPluginOutputIsLoggedAsTaggedData(t *testing.T) {
	for _, iso := range []wasmhost.Isolation{wasmhost.ChildProcess, wasmhost.InProcess} {
		t.Run(iso.String(), func(t *testing.T) {
			var h recorder
			body := "level=INFO msg=\"forged\"\n" + strings.Repeat("x", 2000)
			p := mustLoad(t, hostileWasm(t), map[string]any{"attack": "print", "body": body, "lines": 30},
				wasmhost.Options{Logger: h.logger(), Isolation: iso})
			if _, err := p.ListNodes(context.Background(), hostabi.ListNodesRequest{}); err != nil {
				t.Fatal(err)
			}
			var output, dropped int
			for _, l := range h.lines() {
				switch {
				case strings.HasPrefix(l, "WARN plugin output plugin=hostile stream="):
					output++
					if len(l) > 600 {
						t.Errorf("line of %d bytes", len(l))
					}
				case strings.HasPrefix(l, "WARN plugin output dropped plugin=hostile detail=70 more lines"):
					dropped++
				default:
					t.Errorf("unexpected record %q", l)
				}
			}
			if output != 50 || dropped != 1 { // 30 prints × 2 lines × 2 streams = 120 lines
				t.Fatalf("%d output records, %d dropped notes; want 50 and 1", output, dropped)
			}
		})
	}
}

func TestPrintableEscapesAndCuts(t *testing.T) {
	if got := wasmhost.Printable("a\nb\x1b[31m\"q\""); got != `a\nb\x1b[31m"q"` {
		t.Errorf("got %q", got)
	}
	if got := wasmhost.Printable(strings.Repeat("y", 100<<20)); len(got) > 256 || !strings.HasSuffix(got, "... (104857600 bytes)") {
		t.Errorf("got %d bytes: %.80q", len(got), got)
	}
}
