package wasmhost

import (
	"strings"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
)

func TestUngrantedNamesEachMissingServiceAndWhatToGrant(t *testing.T) {
	bm := hostabi.Service{Name: "baremetal", Type: "baremetal"}
	cases := []struct {
		declared []hostabi.Service
		granted  map[string]string
		want     []string // substrings; none means ""
	}{
		{nil, nil, nil}, // declares nothing: an older plugin, not checked
		{[]hostabi.Service{}, nil, nil},
		{[]hostabi.Service{bm}, map[string]string{"baremetal": "catalog"}, nil},
		{[]hostabi.Service{bm}, map[string]string{"ironic": "catalog:baremetal"},
			[]string{`service "baremetal" (grant baremetal = "catalog" or a URL)`, "(granted: ironic)"}},
		{[]hostabi.Service{{Name: "bm-east", Type: "baremetal"}, {Name: "world"}}, nil,
			[]string{`"bm-east" (grant bm-east = "catalog:baremetal" or a URL)`, `"world" (grant world = a URL)`, "(granted: none)"}},
	}
	for _, c := range cases {
		got := ungranted(c.declared, c.granted)
		if (got == "") != (len(c.want) == 0) {
			t.Errorf("ungranted(%v, %v) = %q", c.declared, c.granted, got)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("ungranted(%v, %v) = %q, lacks %q", c.declared, c.granted, got, w)
			}
		}
	}
}
