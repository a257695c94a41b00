package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"golang.org/x/crypto/bcrypt"

	"github.com/rpengine/rpengine/internal/testing/etcdtest"
	"github.com/rpengine/rpengine/internal/testing/placementtest"
	"github.com/rpengine/rpengine/internal/testing/plugintest"
)

// A distinct secret in every config field that can hold one, and none of
// them on any surface: the daemon's log, the output of every verb, the
// status page and every API route, /metrics and the probes, the state
// file and the record in etcd. Placement is reached through a proxy
// that lets a request in only with the endpoint's user info, its query
// token after the request's path and the token, so the engine is shown
// to use each secret, not just to hide it.
func TestPlantedSecretsReachNoSurface(t *testing.T) {
	r := newScanRig(t)
	r.verb(r.cfg, "validate")
	r.verb(r.cfg, "once")
	// The fake plugin reads no events: with [events] the daemon refuses
	// to start, which is one more surface.
	events := r.write("events.toml", strings.Replace(readText(t, r.cfg), "[coord]", fmt.Sprintf("[events]\ntransport_url = \"amqp://rpengine@%s/\"\npassword_file = %q\n\n[coord]",
		freeAddr(t), r.write("amqp.pw", r.sec["events.password_file"])), 1))
	r.verb(events, "validate")
	r.verb(events, "run")
	// Placement gone: every error that quotes its URL.
	dead := r.write("dead.toml", strings.Replace(readText(t, r.cfg), r.proxy, freeAddr(t), 1))
	for _, v := range []string{"validate", "once", "plan"} {
		r.verb(dead, v)
	}
	r.daemonSurfaces()
	if n := r.refused.Load(); n > 0 || r.worldServed.Load() == 0 {
		t.Errorf("%d requests refused without every planted secret; the world service answered %d", n, r.worldServed.Load())
	}
	if !strings.Contains(r.surfaces["engine run --config events.toml"], "[events]") {
		t.Errorf("a surface is empty: run with [events] %q", r.surfaces["engine run --config events.toml"])
	}
	for where, text := range r.surfaces {
		for field, secret := range r.sec {
			if strings.Contains(text, secret) {
				t.Errorf("%s shows %s's secret:\n%s", where, field, excerpt(text, secret))
			}
		}
	}
}

// scanRig is one engine configured with a planted secret in every field
// that holds one, and the text of every surface seen so far.
type scanRig struct {
	t              *testing.T
	sec            map[string]string // field → its secret
	etcd           *etcdtest.Secure
	dir, cfg, addr string
	proxy          string // Placement's proxy, host:port
	node           string
	refused        atomic.Int64
	worldServed    atomic.Int64 // the world service's answers
	surfaces       map[string]string
	client         *http.Client
}

func newScanRig(t *testing.T) *scanRig {
	r := &scanRig{t: t, sec: map[string]string{
		"placement.endpoint user info":   "PlcUserInfoS3cret1",
		"placement.endpoint query token": "PlcQueryT0kenS3cret2",
		"placement.token":                "PlcTokenS3cret3",
		"events.password_file":           "AmqpPasswordS3cret4",
		"server.web_config_file user":    "WebBasicAuthS3cret6",
		"plugin.services user info":      "SvcUserInfoS3cret7",
	}, etcd: etcdtest.StartSecure(t, "/rpengine/"), dir: t.TempDir(), addr: freeAddr(t), node: uuidFor(t.Name(), 0),
		surfaces: map[string]string{},
		client:   &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}}
	s := r.etcd
	r.sec["coord.password_file"] = s.Password
	hash, _ := bcrypt.GenerateFromPassword([]byte(r.sec["server.web_config_file user"]), bcrypt.MinCost)
	r.sec["server.web_config_file hash"] = string(hash)
	r.proxy = placementProxy(t, placementtest.Shared(t), r.sec, &r.refused)
	world := r.worldService()
	web := r.write("web.yml", fmt.Sprintf("tls_server_config:\n  cert_file: %s\n  key_file: %s\nbasic_auth_users:\n  ops: %s\n", s.Cert, s.Key, hash))
	r.cfg = r.write("config.toml", fmt.Sprintf(`[engine]
id = "scan-%x"
interval = "2s"
state_file = "state.json"

[provider]
marker_traits = ["COMPUTE_NODE"]

[placement]
endpoint = %q
token = %q

[plugin]
path = %q
cache_dir = %q

[server]
listen = %q
web_config_file = %q

[plugin.services]
world = %q

[coord]
etcd = [%q]
partitions = 2
lease_ttl = "4s"
ca_file = %q
cert_file = %q
key_file = %q
user = %q
password_file = %q

%s`, os.Getpid(), fmt.Sprintf("http://plc:%s@%s/?token=%s", r.sec["placement.endpoint user info"], r.proxy, r.sec["placement.endpoint query token"]),
		r.sec["placement.token"], plugintest.Build(t, "plugins/fake"), plugintest.CacheDir(), r.addr, web, world, s.URL,
		s.CA, s.Cert, s.Key, s.User, r.write("etcd.pw", s.Password),
		strings.Replace(worldTOML([]worldNode{{uuid: r.node, rc: "gold", power: "power off", provision: "available"}}, nil),
			"[plugin.config]\n", "[plugin.config]\nworld = \"world\"\n", 1)))
	return r
}

// worldService serves the fake plugin its one node, to a request that
// carries the grant's user info alone; its URL holds that credential.
func (r *scanRig) worldService() string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if _, pw, _ := req.BasicAuth(); pw != r.sec["plugin.services user info"] {
			r.refused.Add(1)
			http.Error(w, "a planted secret is missing", http.StatusForbidden)
			return
		}
		r.worldServed.Add(1)
		if strings.HasSuffix(req.URL.Path, "/instances") {
			fmt.Fprint(w, `{"instances": []}`)
			return
		}
		fmt.Fprintf(w, `{"nodes": [{"uuid": %q, "resource_class": "gold", "power_state": "power off", "provision_state": "available"}]}`, r.node)
	}))
	r.t.Cleanup(srv.Close)
	return fmt.Sprintf("http://svc:%s@%s/w", r.sec["plugin.services user info"], strings.TrimPrefix(srv.URL, "http://"))
}

func (r *scanRig) write(name, text string) string {
	p := filepath.Join(r.dir, name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		r.t.Fatal(err)
	}
	return p
}

// verb runs `engine VERB --config cfg ARGS…` and keeps its output.
func (r *scanRig) verb(cfg string, args ...string) {
	res := runEngine(r.t, append(args[:1:1], append([]string{"--config", cfg}, args[1:]...)...)...)
	r.surfaces[strings.TrimSpace(fmt.Sprintf("engine %s --config %s %s", args[0], filepath.Base(cfg), strings.Join(args[1:], " ")))] = res.stdout + res.stderr
}

// fetch asks the daemon's endpoint with TLS and basic auth.
func (r *scanRig) fetch(method, path string) string {
	req, _ := http.NewRequest(method, "https://"+r.addr+path, nil)
	req.SetBasicAuth("ops", r.sec["server.web_config_file user"])
	resp, err := r.client.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return fmt.Sprint(resp.StatusCode, resp.Header, string(b))
}

// daemonSurfaces runs `engine run` for two cycles and keeps every route,
// the verbs beside it, its log, its state file and the record in etcd.
func (r *scanRig) daemonSurfaces() {
	t := r.t
	daemon, logs := startDaemon(t, r.cfg)
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(r.fetch("GET", "/api/v1/report"), `"cycles": 2`); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no two cycles of engine run:\n%s", tail(logs.String(), 3000))
		}
	}
	for _, p := range []string{"/", "/node/" + r.node, "/api/v1/plan", "/api/v1/explain/" + r.node, "/api/v1/report", "/metrics", "/healthz", "/readyz", "/livez"} {
		r.surfaces["GET "+p] = r.fetch("GET", p)
	}
	r.surfaces["POST /api/v1/cycle"] = r.fetch("POST", "/api/v1/cycle")
	for _, args := range [][]string{{"plan"}, {"explain", r.node}, {"audit"}, {"show"}, {"status"}, {"validate"}} {
		r.verb(r.cfg, args...)
	}
	_ = daemon.Process.Signal(syscall.SIGTERM)
	_ = daemon.Wait()
	r.surfaces["engine run's log"] = logs.String()
	r.surfaces["the state file"] = readText(t, filepath.Join(r.dir, "state.json"))
	r.surfaces["the record in etcd"] = etcdDump(t, r.etcd)
}

// placementProxy forwards to Placement only requests that carry every
// Placement secret where the config put it, with the path intact.
func placementProxy(t *testing.T, target string, sec map[string]string, refused *atomic.Int64) string {
	tu, _ := url.Parse(target)
	rp := httputil.NewSingleHostReverseProxy(tu)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pw, _ := r.BasicAuth()
		q := r.URL.Query()
		if pw != sec["placement.endpoint user info"] || q.Get("token") != sec["placement.endpoint query token"] ||
			r.Header.Get("X-Auth-Token") != sec["placement.token"] {
			refused.Add(1)
			http.Error(w, "a planted secret is missing", http.StatusForbidden)
			return
		}
		q.Del("token")
		r.URL.RawQuery = q.Encode()
		r.Header.Del("Authorization")
		r.Header.Set("X-Auth-Token", "admin")
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// etcdDump is every key and value under the prefix, read as root.
func etcdDump(t *testing.T, s *etcdtest.Secure) string {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{s.URL}, TLS: s.ClientTLS(), Username: "root", Password: s.Root,
		DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := cli.Get(ctx, s.Prefix, clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, kv := range r.Kvs {
		fmt.Fprintf(&b, "%s = %s\n", kv.Key, kv.Value)
	}
	return b.String()
}

func readText(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func excerpt(text, secret string) string {
	i := strings.Index(text, secret)
	return text[max(0, i-300):min(len(text), i+len(secret)+100)]
}
