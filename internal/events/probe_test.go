package events_test

import (
	"slices"
	"testing"

	"github.com/rpengine/rpengine/internal/events"
)

func TestWatermark(t *testing.T) {
	var w events.Watermark
	if c, o := w.Changed([]string{"a", "b", "c"}, []string{"3", "2", "1"}, 3); c != nil || o {
		t.Fatalf("first probe: %v %v; want only the watermark set", c, o)
	}
	if c, o := w.Changed([]string{"a", "b", "c"}, []string{"3", "2", "1"}, 3); c != nil || o {
		t.Fatalf("nothing changed: %v %v", c, o)
	}
	// c changed again (new stamp), d moved into the window: both new; a
	// kept its stamp.
	if c, o := w.Changed([]string{"c", "d", "a"}, []string{"5", "4", "3"}, 3); !slices.Equal(c, []string{"c", "d"}) || o {
		t.Fatalf("changed %v overflow %v; want [c d] false", c, o)
	}
	// All three new in a full window: more may have changed unseen.
	if c, o := w.Changed([]string{"e", "f", "g"}, []string{"8", "7", "6"}, 3); len(c) != 3 || !o {
		t.Fatalf("changed %v overflow %v; want all three and an overflow", c, o)
	}
	// A window not full is everything there is: no overflow.
	var v events.Watermark
	v.Changed([]string{"a"}, []string{"1"}, 3)
	if c, o := v.Changed([]string{"b", "a"}, []string{"2", "0"}, 3); len(c) != 2 || o {
		t.Fatalf("changed %v overflow %v; want both, no overflow", c, o)
	}
}
