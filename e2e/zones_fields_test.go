package e2e

import (
	"fmt"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/ironictest"
	"github.com/rpengine/rpengine/internal/testing/placementtest"
)

// Zones by owner and by a node property, on the real Ironic: an owner
// rule (az-a) before a property rule (az-b, Ironic's properties.rack).
// A node of both is az-a's (first match), a node with the key only in
// extra is in neither. A node moved by giving it the rack and then
// another owner is az-b's after a node sync (`engine once --node`: the
// node read carries the fields a listing does), never in neither zone or
// both on the way (TestZonesByShard's checks, nova's query included).
func TestZonesByOwnerAndProperty(t *testing.T) {
	url := placementtest.StartReal(t)
	ironicURL := ironictest.StartReal(t)
	c := ironictest.NewClient(t, ironicURL)
	z := zoneMove{url: url, ironicURL: ironicURL, c: c, groups: map[string][]string{},
		rules: zoneRulesBy(`owner = "tenant-a"`, "property = \"properties.rack\"\nvalue = \"r12\""),
		moved: `properties.rack="r12"`, nodeSync: true}
	for i, set := range []map[string]any{
		{"/owner": "tenant-a"},
		{"/properties/rack": "r12", "/owner": "tenant-b"},
		{"/owner": "tenant-a", "/properties/rack": "r12"},
		{"/properties/rack": "r12"},
		{"/extra/rack": "r12", "/properties/rack": "r13"},
	} {
		u := c.Create(t, ironictest.Spec{Name: fmt.Sprintf("zf%d", i), ResourceClass: "baremetal-gold"})
		for path, v := range set {
			c.Set(t, u, path, v)
		}
		c.Available(t, u)
		if g := []string{"rack-a", "rack-b", "rack-a", "rack-b", ""}[i]; g != "" {
			z.groups[g] = append(z.groups[g], u)
		}
	}
	z.move = func(u string) {
		c.Set(t, u, "/properties/rack", "r12") // still tenant-a's: az-a
		c.Set(t, u, "/owner", "tenant-b")
	}
	z.run(t)
}
