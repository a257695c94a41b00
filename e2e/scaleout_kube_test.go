package e2e

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"syscall"
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
	lines := append(k.lines(t, addr, prefix), fmt.Sprintf("partitions = %d", partitions), fmt.Sprintf("lease_ttl = %q", ttl))
	return "\n" + strings.Join(lines, "\n") + "\n"
}

// lines are the [coord] table's first lines: the backend, how to reach
// it and the fleet's prefix.
func (k *kubeFleet) lines(t *testing.T, addr, prefix string) []string {
	server := "https://" + strings.TrimPrefix(addr, "http://")
	return []string{"[coord]", `backend = "kubernetes"`, fmt.Sprintf("kubeconfig = %q", k.srv.Kubeconfig(t, server, k.ns)),
		fmt.Sprintf("namespace = %q", k.ns), fmt.Sprintf("prefix = %q", prefix)}
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

// An engine paused (SIGSTOP) past its Lease: the others take its nodes
// over and repair them; its providers are damaged again just before it
// resumes, so an engine acting on its old claims would write them at
// once. Resumed, it registers anew and gets its share back only through
// hand-overs: no writes while paused, no provider written in turns
// (X, Y, X within an interval) from the resume on, and Placement ends as
// one engine would want it.
func TestScaleOutKubePausedPastTheLease(t *testing.T) {
	r := newKubeScaleRig(t, 0x5ca1f3)
	ids := []string{r.id(1), r.id(2), r.id(3)}
	for n := 1; n <= 3; n++ {
		r.start(n)
	}
	r.waitSettled(30*time.Second, ids...)
	r.waitQuiet()
	paused := r.engines[ids[0]]
	mine := r.damage(ids[0])
	if err := paused.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	t.Cleanup(func() { _ = paused.cmd.Process.Signal(syscall.SIGCONT) })
	r.waitSettled(4*soInterval, ids[1:]...)
	for _, uuid := range mine {
		dropTrait(t, r.placement, uuid, "COMPUTE_NODE")
	}
	resumed := time.Now()
	if err := paused.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	t.Logf("paused %s for %s; %d of its providers damaged before and after the take-over", ids[0],
		resumed.Sub(stopped).Round(time.Millisecond), len(mine))
	if ws := r.log.writesBy(ids[0], stopped); len(ws) > 0 && ws[0].at.Before(resumed) {
		t.Fatalf("the paused engine wrote while paused: %v", ws[0])
	}
	r.waitSettled(6*soInterval, ids...)
	r.log.checkNoDeletes(t)
	r.log.checkNoPingPong(t, soInterval, resumed)
	r.checkDesired(ids...)
}

// damage drops COMPUTE_NODE from every provider id manages, and returns
// their uuids.
func (r *scaleRig) damage(id string) []string {
	var out []string
	for uuid, o := range r.owners(id) {
		if len(o) == 1 {
			dropTrait(r.t, r.placement, uuid, "COMPUTE_NODE")
			out = append(out, uuid)
		}
	}
	if len(out) == 0 {
		r.t.Fatalf("%s manages no provider", id)
	}
	return out
}
