package tools

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// The rendered Deployment's probes hit what the daemon serves: bin/engine
// runs the chart's own rpengine.toml (Keystone and Ironic swapped for a
// real local Placement and the fake plugin, paths moved to a temporary
// directory) and answers 200 on each probe's path at the port the probe
// names. make test sets RPENGINE_ENGINE_BIN and RPENGINE_PLUGIN_DIR.
func TestProbesHitTheDaemon(t *testing.T) {
	bin, plugins := os.Getenv("RPENGINE_ENGINE_BIN"), os.Getenv("RPENGINE_PLUGIN_DIR")
	if bin == "" || plugins == "" {
		t.Skip("RPENGINE_ENGINE_BIN and RPENGINE_PLUGIN_DIR unset (make test sets them after make build plugins)")
	}
	objs, err := decode(render(t, valueSets["one"]))
	if err != nil {
		t.Fatal(err)
	}
	dep, cm := find[*appsv1.Deployment](objs), find[*corev1.ConfigMap](objs)
	c := dep.Spec.Template.Spec.Containers[0]
	conf := map[string]any{}
	if _, err := toml.Decode(cm.Data["rpengine.toml"], &conf); err != nil {
		t.Fatalf("the chart's rpengine.toml: %v", err)
	}
	port := probePort(t, c)
	if listen := conf["server"].(map[string]any)["listen"]; listen != fmt.Sprintf("0.0.0.0:%d", port) {
		t.Fatalf("server.listen %v is not the probes' port %d on every address", listen, port)
	}
	free := freePort(t)
	dir := t.TempDir()
	local(conf, dir, placement(t, dir), filepath.Join(plugins, "fake.wasm"), free)
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(conf); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "rpengine.toml")
	if err := os.WriteFile(cfg, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	startEngine(t, bin, append(c.Args[:len(c.Args)-1], cfg), dir)
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe} {
		url := fmt.Sprintf("http://127.0.0.1:%d%s", free, p.HTTPGet.Path)
		if code := poll(url, 90*time.Second); code != http.StatusOK {
			t.Errorf("GET %s (the chart's probe on port %d, moved to %d): %d, want 200", url, port, free, code)
		}
	}
}

func find[T any](objs []object) T {
	for _, o := range objs {
		if v, ok := o.obj.(T); ok {
			return v
		}
	}
	var zero T
	return zero
}

// probePort is the container port both probes name.
func probePort(t *testing.T, c corev1.Container) int32 {
	t.Helper()
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Port.StrVal != "http" {
			t.Fatalf("probe %+v is not an httpGet on the port named http", p)
		}
	}
	for _, p := range c.Ports {
		if p.Name == "http" {
			return p.ContainerPort
		}
	}
	t.Fatal("no container port named http")
	return 0
}

// local points the chart's config at what this machine has.
func local(conf map[string]any, dir, placementURL, fake string, port int) {
	conf["auth"] = map[string]any{"method": "noauth"}
	conf["placement"] = map[string]any{"endpoint": placementURL, "token": "admin"}
	p := conf["plugin"].(map[string]any)
	p["path"], p["cache_dir"] = fake, filepath.Join(dir, "cache")
	p["config"] = map[string]any{"nodes": 5, "seed": 1}
	delete(p, "services")
	conf["engine"].(map[string]any)["state_file"] = filepath.Join(dir, "state.json")
	conf["server"].(map[string]any)["listen"] = fmt.Sprintf("127.0.0.1:%d", port)
}

// placement starts the real Placement (scripts/placement/start.sh).
func placement(t *testing.T, dir string) string {
	t.Helper()
	root := filepath.Join(chartDir(t), "..", "..", "..")
	pdir := filepath.Join(dir, "placement")
	out, err := exec.Command(filepath.Join(root, "scripts/placement/start.sh"), pdir, "0").CombinedOutput()
	t.Cleanup(func() { _ = exec.Command(filepath.Join(root, "scripts/placement/stop.sh"), pdir).Run() })
	if err != nil {
		t.Fatalf("scripts/placement/start.sh: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

func startEngine(t *testing.T, bin string, args []string, dir string) {
	t.Helper()
	log, err := os.Create(filepath.Join(dir, "engine.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("engine log:\n%s", b)
		}
	})
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// poll GETs url until it answers 200 or limit passes; the last status.
func poll(url string, limit time.Duration) int {
	code := 0
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		resp, err := http.Get(url)
		if err != nil {
			continue
		}
		resp.Body.Close()
		if code = resp.StatusCode; code == http.StatusOK {
			break
		}
	}
	return code
}
