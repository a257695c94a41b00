package config

import (
	"strings"
	"testing"

	"github.com/rpengine/rpengine/engine/placement"
)

func TestPlacementBounds(t *testing.T) {
	dir := dirWithPlugin(t)
	c, err := Parse(good, dir)
	if err != nil {
		t.Fatal(err)
	}
	if c.Placement.MaxResponse != placement.DefaultMaxResponse || c.Placement.MaxProviders != placement.DefaultMaxProviders {
		t.Fatalf("defaults %+v", c.Placement)
	}
	set := strings.Replace(good, "token = \"admin\"", "token = \"admin\"\nmax_response = \"1GiB\"\nmax_providers = 500000", 1)
	if c, err = Parse(set, dir); err != nil || c.Placement.MaxResponse != 1<<30 || c.Placement.MaxProviders != 500000 {
		t.Fatalf("%v %+v", err, c)
	}
	bad := strings.Replace(good, "token = \"admin\"", "token = \"admin\"\nmax_response = \"1KiB\"\nmax_providers = 0", 1)
	_, err = Parse(bad, dir)
	if err == nil || !strings.Contains(err.Error(), "placement.max_response: must be at least 1MiB") ||
		!strings.Contains(err.Error(), "placement.max_providers: must be at least 1") {
		t.Fatalf("%v", err)
	}
}
