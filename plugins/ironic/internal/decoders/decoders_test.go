package decoders

import (
	"reflect"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/plugins/ironic/ironic"

	"github.com/rpengine/rpengine/plugins/ironic/internal/fakeironic"
)

// Every decoder measured must decode the same pages to the same nodes,
// or the comparison means nothing.
func TestDecodersAgree(t *testing.T) {
	pages := fakeironic.Pages(t, fakeironic.Generate(2500, 3), 1000)
	want := fill(t, All["project"], pages[0])
	for name, dec := range All {
		for i, p := range pages {
			page, err := dec(p)
			if err != nil {
				t.Fatalf("%s page %d: %v", name, i, err)
			}
			got, next := fill(t, dec, p), page.Next()
			if i == 0 && !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: first node %+v, want %+v", name, got[0], want[0])
			}
			if (next != "") != (i < 2) {
				t.Fatalf("%s page %d: next %q", name, i, next)
			}
		}
	}
}

func fill(t *testing.T, dec ironic.PageDecoder, body []byte) []hostabi.Node {
	t.Helper()
	p, err := dec(body)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]hostabi.Node, p.Len())
	if err := p.Fill(out); err != nil {
		t.Fatal(err)
	}
	return out
}
