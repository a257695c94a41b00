package coord_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/coord"
)

// rbacRole is the Role docs/SCALEOUT.md gives, verbatim in its rules.
const rbacRole = `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"rpengine"},"rules":[
 {"apiGroups":["coordination.k8s.io"],"resources":["leases"],"verbs":["get","list","watch","create","update"]},
 {"apiGroups":[""],"resources":["configmaps"],"verbs":["get","list","create","update"]}]}`

const rbacBinding = `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"rpengine"},
 "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"rpengine"},
 "subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"rpengine"}]}`

// A user with only the documented Role does all the backend does: it is
// refused before the RoleBinding, and registers, claims, watches and
// keeps the record after it.
func kubeRBAC(t *testing.T, r *kubeRig) {
	const ns = "rpengine-rbac"
	r.srv.Namespace(t, ns)
	cfg := r.config("least", coord.Division{Partitions: 4})
	cfg.RegisterWait = ttl
	access := coord.KubeAccess{Kubeconfig: r.srv.KubeconfigAs(t, r.srv.URL, ns, r.srv.UserToken)}
	if _, err := coord.NewKube(context.Background(), cfg, access); err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("without a RoleBinding: %v; want 403 Forbidden", err)
	}
	r.srv.Create(t, "/apis/rbac.authorization.k8s.io/v1/namespaces/"+ns+"/roles", rbacRole)
	r.srv.Create(t, "/apis/rbac.authorization.k8s.io/v1/namespaces/"+ns+"/rolebindings", rbacBinding)
	cfg.RegisterWait = 0
	c, err := coord.NewKube(context.Background(), cfg, access)
	if err != nil {
		t.Fatalf("with the documented Role: %v", err)
	}
	defer c.Close()
	a := syncKube(t, c)
	if len(a.Held) != 4 {
		t.Fatalf("holds %v", a.Held)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	woke := make(chan struct{}, 1)
	go c.Watch(ctx, func() {
		select {
		case woke <- struct{}{}:
		default:
		}
	})
	rec := c.Records(a, "P")
	if err := rec.Store(ctx, map[string][]byte{"u": []byte("1")}, nil); err != nil {
		t.Fatalf("store: %v", err)
	}
	if err := rec.Store(ctx, map[string][]byte{"u": []byte("2")}, nil); err != nil {
		t.Fatalf("store again (update): %v", err)
	}
	if got, err := rec.Load(ctx); err != nil || string(got["u"]) != "2" {
		t.Fatalf("load: %q %v", got["u"], err)
	}
	if _, err := c.RecordPlacement(ctx, "CUSTOM_X", 0); err != nil {
		t.Fatalf("record placement: %v", err)
	}
	peerCfg := r.config("peer", coord.Division{Partitions: 4})
	peer, err := coord.NewKube(context.Background(), peerCfg, access)
	if err != nil {
		t.Fatalf("peer: %v", err)
	}
	defer peer.Close()
	select { // the watch (list, then watch) sees the peer register
	case <-woke:
	case <-time.After(10 * ttl):
		t.Fatal("the watch did not see a peer register")
	}
}
