package e2e

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/testing/kubetest"
	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

// The scale-out rigs again, with the engines coordinating through a real
// kube-apiserver instead of etcd (make test-kube). Each engine reaches
// the API server through its own severable proxy, as it reaches etcd in
// the etcd rigs.

// kubeFleet is the API server the engines of one rig share.
type kubeFleet struct {
	srv *kubetest.Server
	ns  string
}

func startKubeFleet(t *testing.T) (*kubeFleet, string) {
	srv := kubetest.Start(t)
	srv.Namespace(t, "rpengine-e2e")
	return &kubeFleet{srv: srv, ns: "rpengine-e2e"}, strings.TrimPrefix(srv.URL, "https://")
}

// section is the [coord] of an engine reaching the API server at addr:
// host:port, or a proxy's http:// URL for it (the proxy is plain TCP).
func (k *kubeFleet) section(t *testing.T, addr string, partitions int, ttl time.Duration, prefix string) string {
	server := "https://" + strings.TrimPrefix(addr, "http://")
	return fmt.Sprintf("\n[coord]\nbackend = \"kubernetes\"\nkubeconfig = %q\nnamespace = %q\npartitions = %d\nlease_ttl = %q\nprefix = %q\n",
		k.srv.Kubeconfig(t, server, k.ns), k.ns, partitions, ttl, prefix)
}

func newKubeScaleRig(t *testing.T, seed int) *scaleRig {
	t.Helper()
	kube, addr := startKubeFleet(t)
	r := &scaleRig{t: t, placement: placementtest.Shared(t), etcd: addr, kube: kube,
		plugin: plugintest.Build(t, "plugins/fake"), seed: seed, log: &requestLog{}, engines: map[string]*engineProc{}}
	r.desired = r.oracle()
	r.observer = r.config(r.id(0), r.placement, r.etcd, true)
	return r
}

// Three engines; one is killed (-9): its nodes are managed again within
// two intervals; it comes back and the division settles back; no
// deletes, no ping-pong, Placement as one engine would want it.
func TestScaleOutKubeKillAndRestart(t *testing.T) {
	scaleOutKillAndRestart(t, newKubeScaleRig(t, 0x5ca1f1))
}

// An engine cut off from the API server writes nothing once its member
// Lease may be taken; the others take over and repair; it gets its
// share back when healed.
func TestScaleOutKubeCutOff(t *testing.T) {
	scaleOutCutOff(t, newKubeScaleRig(t, 0x5ca1f2))
}

// Five take-overs from killed engines, the record shared in ConfigMaps:
// 0 stray traits.
func TestScaleOutKubeTakeOverLeavesNoStrays(t *testing.T) {
	kube, addr := startKubeFleet(t)
	r := &recordRig{t: t, placement: placementtest.Shared(t), etcd: addr, kube: kube,
		plugin: plugintest.Build(t, "plugins/fake"), world: &crashRig{}, n: 40}
	r.u = func(i int) string { return uuidFor(t.Name(), i) }
	srv := httptest.NewServer(r.world)
	t.Cleanup(srv.Close)
	r.worldURL = srv.URL
	takeOverLeavesNoStrays(t, r)
}
