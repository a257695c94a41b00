package config

import (
	"strings"
	"testing"
	"time"
)

func TestCoordDefaultsAndKeys(t *testing.T) {
	c, err := Parse(good, dirWithPlugin(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Coord.Etcd) != 0 || c.Coord.LeaseTTL.D() != 10*time.Second || c.Coord.Prefix != "/rpengine/" {
		t.Fatalf("defaults %+v", c.Coord)
	}
	c, err = Parse(good+"\n[coord]\netcd = [\"http://127.0.0.1:2379\"]\npartitions = 64\nlease_ttl = \"4s\"\n", dirWithPlugin(t))
	if err != nil {
		t.Fatal(err)
	}
	if c.Coord.Partitions != 64 || c.Coord.LeaseTTL.D() != 4*time.Second {
		t.Fatalf("coord %+v", c.Coord)
	}
}

func TestCoordChecks(t *testing.T) {
	for _, tc := range []struct{ toml, want string }{
		{"[coord]\npartitions = 8", "coord.etcd: is required"},
		{"[coord]\netcd = [\"127.0.0.1:2379\"]", "coord.etcd: \"127.0.0.1:2379\" is not"},
		{"[coord]\netcd = [\"http://e:2379\"]\npartitions = 8\nshards = [\"a\"]", "exclude each other"},
		{"[coord]\netcd = [\"http://e:2379\"]\npartitions = 5000", "coord.partitions: must be in 0..4096"},
		{"[coord]\netcd = [\"http://e:2379\"]\nlease_ttl = \"1500ms\"", "coord.lease_ttl: must be whole seconds"},
		{"[coord]\netcd = [\"http://e:2379\"]\nprefix = \"x\"", "coord.prefix: must start with /"},
		{"[scope]\nshards = [\"a\"]\n[coord]\netcd = [\"http://e:2379\"]\nshards = [\"a\"]", "replaces scope.shards"},
		{"[coord]\netcd = [\"http://e:2379\"]\nparts = 3", "unknown key(s): coord.parts"},
	} {
		_, err := Parse(strings.Replace(good, "[plugin]", tc.toml+"\n[plugin]", 1), dirWithPlugin(t))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.toml, err, tc.want)
		}
	}
}
