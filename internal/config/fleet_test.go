package config

import (
	"strings"
	"testing"
)

// Beside nova, engines dividing by partitions share a fleet marker and a
// hold project (each its own hold user); shards cannot be divided so.
func TestFleetMarker(t *testing.T) {
	coord := "[coord]\netcd = [\"http://127.0.0.1:2379\"]\npartitions = 8\n"
	c, err := Parse(good+coord+"[nova]\nbeside = true\n", dirWithPlugin(t))
	if err != nil {
		t.Fatal(err)
	}
	if !c.FleetMarker() || !strings.HasPrefix(c.FleetID(), "fleet-") {
		t.Fatalf("fleet marker %v, id %q", c.FleetMarker(), c.FleetID())
	}
	if p, u := c.HoldIDs(); p != "rpengine-hold-"+c.FleetID() || u != "rpengine-hold-e1" {
		t.Errorf("fleet hold ids %q %q", p, u)
	}
	other, err := Parse(strings.Replace(good, `id = "e1"`, `id = "e2"`, 1)+coord+"[nova]\nbeside = true\n", dirWithPlugin(t))
	if err != nil {
		t.Fatal(err)
	}
	if other.FleetID() != c.FleetID() {
		t.Errorf("two engines of one fleet: %q and %q", c.FleetID(), other.FleetID())
	}
	moved, err := Parse(good+strings.Replace(coord, "partitions", "prefix = \"/other/\"\npartitions", 1)+"[nova]\nbeside = true\n", dirWithPlugin(t))
	if err != nil {
		t.Fatal(err)
	}
	if moved.FleetID() == c.FleetID() {
		t.Error("another prefix is another fleet")
	}
	alone, err := Parse(good+coord, dirWithPlugin(t))
	if err != nil || alone.FleetMarker() || alone.FleetID() != "" {
		t.Errorf("without nova: fleet marker %v (%v)", alone.FleetMarker(), err)
	}
	_, err = Parse(good+"[coord]\netcd = [\"http://127.0.0.1:2379\"]\nshards = [\"a\", \"b\"]\n[nova]\nbeside = true\n", dirWithPlugin(t))
	if err == nil || !strings.Contains(err.Error(), "coord.shards cannot be divided beside nova") {
		t.Errorf("shards beside nova: %v", err)
	}
}
