package decoders

import (
	"reflect"
	"testing"

	"github.com/rpengine/rpengine/plugins/ironic/internal/fakeironic"
)

// Every decoder measured must decode the same pages to the same nodes,
// or the comparison means nothing.
func TestDecodersAgree(t *testing.T) {
	pages := fakeironic.Pages(t, fakeironic.Generate(2500, 3), 1000)
	want, _, err := All["project"](pages[0])
	if err != nil {
		t.Fatal(err)
	}
	for name, dec := range All {
		for i, p := range pages {
			got, next, err := dec(p)
			if err != nil {
				t.Fatalf("%s page %d: %v", name, i, err)
			}
			if i == 0 && !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: first node %+v, want %+v", name, got[0], want[0])
			}
			if (next != "") != (i < 2) {
				t.Fatalf("%s page %d: next %q", name, i, next)
			}
		}
	}
}
