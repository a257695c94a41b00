package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/testing/etcdtest"
	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

// A stranger holding the engines' etcd role (TLS and auth on) writes
// entries under the record's prefix: a pending creation in the engine's
// own name on a nova-style compute node it never made, a stranger's
// managed trait on one of the engine's providers, a malformed entry and
// a 1 MiB one. The engine, restarted so that it reads the store first,
// writes nothing to either provider over three cycles, keeps the
// operator's trait, and says so once.
func TestForgedRecordInSecuredEtcd(t *testing.T) {
	s := etcdtest.StartSecure(t, "/rpengine/")
	r := &scaleRig{t: t, placement: placementtest.Shared(t), etcd: s.URL, plugin: plugintest.Build(t, "plugins/fake"),
		seed: 0xf0e6, log: &requestLog{}, engines: map[string]*engineProc{}, ttl: 2 * time.Second, interval: 2 * time.Second}
	pw := filepath.Join(t.TempDir(), "etcd.pw")
	if err := os.WriteFile(pw, []byte(s.Password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r.access = fmt.Sprintf("ca_file = %q\ncert_file = %q\nkey_file = %q\nuser = %q\npassword_file = %q\n", s.CA, s.Cert, s.Key, s.User, pw)
	r.desired = r.oracle()
	r.observer = r.config(r.id(0), r.placement, r.etcd, true)
	id := r.id(1)
	r.start(1)
	r.waitSettled(40*time.Second, id)
	nova, own := plantInEtcd(t, r, s, engine.OwnerTrait(id))
	r.kill(1)
	since, logPath := time.Now(), r.engines[id].logPath
	off := fileSize(t, logPath)
	r.start(1)
	for deadline := time.Now().Add(60 * time.Second); strings.Count(readFrom(t, logPath, off), "cycle started") < 4; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no four cycles within 60 s:\n%s", readFrom(t, logPath, off))
		}
	}
	for _, e := range r.log.snapshot() {
		if e.at.After(since) && e.write() && (e.provider == nova || e.provider == own) {
			t.Errorf("a forged entry led to a write: %s", e)
		}
	}
	if p, ok := readProvider(t, r.placement, own); !ok || !slices.Contains(p.Traits, "CUSTOM_OPERATOR") {
		t.Errorf("the operator's trait is gone from %s: %+v", own, p)
	}
	if p, ok := readProvider(t, r.placement, nova); !ok || slices.Contains(p.Traits, engine.OwnerTrait(id)) {
		t.Errorf("the compute node was taken or deleted: %+v %v", p, ok)
	}
	log := readFrom(t, logPath, off)
	if n := strings.Count(log, "shared record entries ignored"); n != 1 {
		t.Errorf("the ignored entries were reported %d times, want once", n)
	}
	if n := strings.Count(log, "shared record entries unreadable"); n != 1 {
		t.Errorf("the unreadable entries were reported %d times, want once", n)
	}
}

// plantInEtcd makes in Placement what the forged entries name and puts
// the entries under the record's prefix with the engines' own role.
func plantInEtcd(t *testing.T, r *scaleRig, s *etcdtest.Secure, marker string) (nova, own string) {
	nova = "33333333-0000-4000-8000-000000000001"
	if code, b := placementDo(t, r.placement, "POST", "/resource_providers", map[string]string{"uuid": nova, "name": "forged-" + r.id(1)}); code != 200 {
		t.Fatalf("create the compute node: %d %s", code, b)
	}
	t.Cleanup(func() { placementDo(t, r.placement, "DELETE", "/resource_providers/"+nova, nil) })
	if code, b := placementDo(t, r.placement, "PUT", "/resource_providers/"+nova+"/traits",
		map[string]any{"resource_provider_generation": 0, "traits": []string{"COMPUTE_NODE"}}); code != 200 {
		t.Fatalf("mark the compute node: %d %s", code, b)
	}
	for u := range r.desired {
		own = u
		break
	}
	placementDo(t, r.placement, "PUT", "/traits/CUSTOM_OPERATOR", nil)
	var cur struct {
		Generation int      `json:"resource_provider_generation"`
		Traits     []string `json:"traits"`
	}
	placementGet(t, r.placement, "/resource_providers/"+own+"/traits", &cur)
	if code, b := placementDo(t, r.placement, "PUT", "/resource_providers/"+own+"/traits",
		map[string]any{"resource_provider_generation": cur.Generation, "traits": append(cur.Traits, "CUSTOM_OPERATOR")}); code != 200 {
		t.Fatalf("the operator's trait: %d %s", code, b)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{s.URL}, TLS: s.ClientTLS(), Username: s.User, Password: s.Password, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got, err := cli.Get(ctx, "/rpengine/record/", clientv3.WithPrefix(), clientv3.WithKeysOnly(), clientv3.WithLimit(1))
	if err != nil || len(got.Kvs) == 0 {
		t.Fatalf("no record in etcd: %v", err)
	}
	dir := string(got.Kvs[0].Key[:strings.LastIndexByte(string(got.Kvs[0].Key), '/')+1])
	for key, v := range map[string]string{
		nova:                                   fmt.Sprintf(`{"by":%q,"Pending":true}`, marker),
		own:                                    `{"by":"CUSTOM_RPENGINE_OWNER_STRANGER","Managed":{"Traits":["CUSTOM_OPERATOR"]}}`,
		"44444444-0000-4000-8000-000000000001": `{not json`,
		"44444444-0000-4000-8000-000000000002": `{"by":` + strings.Repeat(" ", 1<<20) + `"x"}`,
	} {
		if _, err := cli.Put(ctx, dir+key, v); err != nil {
			t.Fatalf("put a forged entry: %v", err)
		}
	}
	return nova, own
}
