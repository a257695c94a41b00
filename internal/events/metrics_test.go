package events

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// The kind label takes the first 32 kinds as they are and "other" past
// them, so a noisy bus cannot grow the lag histogram's series without
// end; a long or broken kind is cut to valid UTF-8.
func TestLagKindsBounded(t *testing.T) {
	var k LagKinds
	for i := range MaxLagKinds {
		if got, want := k.Label(fmt.Sprintf("baremetal.node.k%d.end", i)), fmt.Sprintf("baremetal.node.k%d.end", i); got != want {
			t.Fatalf("kind %d: %q; want %q", i, got, want)
		}
	}
	if got := k.Label("baremetal.node.k0.end"); got != "baremetal.node.k0.end" {
		t.Fatalf("a kind seen before: %q", got)
	}
	if got := k.Label("baremetal.node.new.end"); got != "other" {
		t.Fatalf("kind %d: %q; want other", MaxLagKinds+1, got)
	}
	if got := k.Label(""); got != "unknown" {
		t.Fatalf("no kind: %q; want unknown", got)
	}
	var fresh LagKinds
	long := strings.Repeat("é", 100) // 200 bytes, cut inside a rune
	if got := fresh.Label(long); len(got) > maxKindLength || !utf8.ValidString(got) {
		t.Fatalf("long kind: %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
}
