package hostabi_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A plugin author's module needs only this one: it builds for wasip1 with
// the SDK, and its module graph holds the author's module and the SDK,
// nothing of the engine (etcd, gRPC, Prometheus, wazero).
func TestAPluginModulePullsOnlyTheSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds a module")
	}
	sdk, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/myplugin\n\ngo 1.26.0\n\n"+
		"require github.com/rpengine/rpengine/hostabi v0.0.0\n\n"+
		"replace github.com/rpengine/rpengine/hostabi => "+sdk+"\n")
	write("main.go", `package main

import (
	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/guest"
)

type p struct{}

func (p) Configure([]byte) (string, error)                            { return "mine", nil }
func (p) ListNodes(hostabi.ListNodesRequest) ([]hostabi.Node, error) { return nil, nil }
func (p) ListInstances() ([]hostabi.Instance, error)                 { return nil, nil }
func (p) Services() []hostabi.Service                                { return []hostabi.Service{} }

func init() { guest.Run(p{}) }
func main() {}
`)
	run := func(env []string, args ...string) string {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), append(env, "GOFLAGS=-mod=mod", "GOWORK=off")...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run([]string{"GOOS=wasip1", "GOARCH=wasm"}, "build", "-buildmode=c-shared", "-o", filepath.Join(dir, "p.wasm"), ".")
	mods := strings.Fields(run(nil, "list", "-m", "-f", "{{.Path}}", "all"))
	if want := []string{"example.com/myplugin", "github.com/rpengine/rpengine/hostabi"}; strings.Join(mods, " ") != strings.Join(want, " ") {
		t.Fatalf("the plugin's module graph is %v, want %v", mods, want)
	}
}
