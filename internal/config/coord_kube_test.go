package config

import (
	"strings"
	"testing"
)

func TestCoordKubernetesKeys(t *testing.T) {
	if c, err := Parse(good, dirWithPlugin(t)); err != nil || c.Coord.Backend != BackendEtcd || c.Coord.Enabled() {
		t.Fatalf("default backend %q enabled %v: %v", c.Coord.Backend, c.Coord.Enabled(), err)
	}
	c, err := Parse(strings.Replace(good, "[plugin]", "[coord]\nbackend = \"kubernetes\"\nnamespace = \"openstack\"\n"+
		"kubeconfig = \"/etc/rpengine/kubeconfig\"\npartitions = 16\n[plugin]", 1), dirWithPlugin(t))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Coord.Enabled() || c.Coord.Namespace != "openstack" || c.Coord.Kubeconfig != "/etc/rpengine/kubeconfig" {
		t.Fatalf("coord %+v", c.Coord)
	}
	for _, tc := range []struct{ toml, want string }{
		{"[coord]\nbackend = \"zookeeper\"", `coord.backend: "zookeeper" is neither`},
		{"[coord]\nbackend = \"kubernetes\"\netcd = [\"http://e:2379\"]", "coord.etcd: unused with coord.backend"},
		{"[coord]\nbackend = \"kubernetes\"\nnamespace = \"Open_Stack\"", "is not a Kubernetes namespace name"},
		{"[coord]\netcd = [\"http://e:2379\"]\nnamespace = \"openstack\"", "need coord.backend = \"kubernetes\""},
		{"[coord]\nkubeconfig = \"/k\"", "need coord.backend = \"kubernetes\""},
	} {
		_, err := Parse(strings.Replace(good, "[plugin]", tc.toml+"\n[plugin]", 1), dirWithPlugin(t))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.toml, err, tc.want)
		}
	}
}
