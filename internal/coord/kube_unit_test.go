package coord

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

var dnsName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// Ids and units fold into valid object names, and two that fold alike
// ("rack-a", "rack_a") still get different names.
func TestKubeNamesAreValidAndDistinct(t *testing.T) {
	n := newKubeNames("/rpengine/")
	seen := map[string]string{}
	for _, s := range []string{"rack-a", "rack_a", "RACK-A", "partition/30/7", "shard/Ünïcode shard", strings.Repeat("x", 300)} {
		for _, name := range []string{n.member(s), n.claim(s)} {
			if !dnsName.MatchString(name) || len(name) > 253 {
				t.Errorf("%q gives name %q: not a valid object name", s, name)
			}
			if prev, dup := seen[name]; dup {
				t.Errorf("%q and %q give one name %q", prev, s, name)
			}
			seen[name] = s
		}
	}
	if newKubeNames("/a/").fleet == newKubeNames("/a_/").fleet {
		t.Error("two prefixes give one fleet label")
	}
}

func TestKubeconfigAccess(t *testing.T) {
	dir := t.TempDir()
	write := func(text string) string {
		p := filepath.Join(dir, "kc")
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	k, err := dialKube(write(kubeconfigText("https://10.0.0.1:6443/", "token: s3cret")), "", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := k.token()
	if k.base != "https://10.0.0.1:6443" || k.namespace != "openstack" || tok != "s3cret" {
		t.Fatalf("base %q namespace %q token %q", k.base, k.namespace, tok)
	}
	if err := os.WriteFile(filepath.Join(dir, "tok"), []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	k, err = dialKube(write(kubeconfigText("https://h:6443", "tokenFile: tok")), "", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if tok, err := k.token(); tok != "from-file" {
		t.Fatalf("tokenFile relative to the kubeconfig: %q %v", tok, err)
	}
	if k, _ := dialKube(write(kubeconfigText("https://h:6443", "token: x")), "other", time.Second); k.namespace != "other" {
		t.Fatalf("coord.namespace did not win over the context's: %q", k.namespace)
	}
	for _, tc := range []struct{ text, want string }{
		{kubeconfigText("h:6443", "token: x"), "is not an http(s) URL"},
		{kubeconfigText("https://h:6443", "exec: {command: aws}"), "exec and auth-provider credentials are not supported"},
		{strings.Replace(kubeconfigText("https://h", "token: x"), "current-context: test", "current-context: nope", 1), `current-context "nope"`},
		{"clusters: [", "coord.kubeconfig"},
	} {
		if _, err := dialKube(write(tc.text), "", time.Second); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.text, err, tc.want)
		}
	}
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	if _, err := dialKube("", "", time.Second); err == nil || !strings.Contains(err.Error(), "not in a pod") {
		t.Errorf("in-cluster outside a pod: %v", err)
	}
}

func kubeconfigText(server, user string) string {
	return `apiVersion: v1
current-context: test
clusters:
- name: c
  cluster:
    server: ` + server + `
contexts:
- name: test
  context: {cluster: c, user: u, namespace: openstack}
users:
- name: u
  user: {` + user + `}
`
}

// A peer counts as gone exactly its duration after this process first
// saw its last renewal, whatever renewTime says; a renewal resets it.
func TestObservedLiveness(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := newObservations()
		l := kubeLease{Metadata: objectMeta{Name: "m", ResourceVersion: "1"},
			Spec: leaseSpec{HolderIdentity: "a#1", LeaseDurationSeconds: 2, RenewTime: &microTime{time.Now().Add(-time.Hour)}}}
		o.observe(l)
		time.Sleep(2*time.Second - time.Nanosecond)
		if !o.observe(l).live() {
			t.Fatal("gone before its duration")
		}
		time.Sleep(time.Nanosecond)
		if o.observe(l).live() {
			t.Fatal("live after its duration unrenewed")
		}
		l.Metadata.ResourceVersion = "2"
		if !o.observe(l).live() {
			t.Fatal("a renewal did not make it live again")
		}
		l.Metadata.ResourceVersion, l.Spec.HolderIdentity = "3", ""
		if o.observe(l).live() {
			t.Fatal("a released Lease counts as live")
		}
	})
}

// The Kubernetes fence ends at ¾ TTL without renewals, and at once when
// the registration is lost.
func TestKubeFence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k := &KubeCoordinator{log: slog.New(slog.DiscardHandler), cfg: Config{Member: "m"}}
		l := &lease{ttl: 4 * time.Second, registered: time.Now(), lost: make(chan struct{})}
		l.extend(time.Now(), l.ttl)
		ctx, cancel := k.Fence(t.Context(), Assignment{lease: l})
		defer cancel()
		time.Sleep(3*time.Second - time.Nanosecond)
		synctest.Wait()
		if ctx.Err() != nil {
			t.Fatal("fence ended before ¾ TTL")
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		if !errors.Is(context.Cause(ctx), errKubeFenced) {
			t.Fatalf("at ¾ TTL: %v", context.Cause(ctx))
		}
		l2 := &lease{ttl: time.Minute, until: time.Now().Add(time.Minute), lost: make(chan struct{})}
		ctx2, cancel2 := k.Fence(t.Context(), Assignment{lease: l2})
		defer cancel2()
		close(l2.lost)
		synctest.Wait()
		if !errors.Is(context.Cause(ctx2), errKubeFenced) {
			t.Fatalf("lost registration: %v", context.Cause(ctx2))
		}
	})
}
