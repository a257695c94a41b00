package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/config"
	"github.com/rpengine/rpengine/internal/ops"
)

// invokedAs runs the command line as if the binary were named name.
func invokedAs(t *testing.T, name string, argv ...string) (code int, stdout, stderr string) {
	t.Helper()
	old := prog
	prog = progName("/usr/bin/" + name)
	t.Cleanup(func() { prog = old })
	var out, errb bytes.Buffer
	code = run(context.Background(), argv, &out, &errb)
	return code, out.String(), errb.String()
}

// Installed as rpengine, the binary calls itself rpengine in its help,
// its errors, --version and the completion it prints; never "engine ".
func TestNamedAsInvoked(t *testing.T) {
	cases := [][]string{{"help"}, {"help", "plan"}, {"plan", "--help"}, {"frobnicate"}, {"--version"},
		{"completion", "bash"}, {"completion", "zsh"}, {"once", "extra", "--config", "x.toml"}}
	for _, argv := range cases {
		_, out, errb := invokedAs(t, "rpengine", argv...)
		all := out + errb
		if !strings.Contains(all, "rpengine") {
			t.Errorf("%v: does not say rpengine:\n%s", argv, all)
		}
		for _, line := range strings.Split(all, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "engine ") || strings.Contains(line, "usage: engine") ||
				strings.Contains(line, "complete -F _engine engine") || strings.HasPrefix(line, "#compdef engine") {
				t.Errorf("%v: a line names the binary engine: %q", argv, line)
			}
		}
	}
	if _, out, _ := invokedAs(t, "rpengine", "completion", "bash"); !strings.Contains(out, "complete -F _engine rpengine\n") {
		t.Errorf("bash completion is not registered for rpengine:\n%s", out)
	}
	if got := progName(""); got != "engine" {
		t.Errorf("progName(\"\") = %q", got)
	}
}

// A mistyped verb or flag gets the nearest real one; a word far from
// every one gets none.
func TestDidYouMean(t *testing.T) {
	cases := []struct {
		argv []string
		want string
	}{
		{[]string{"onec"}, `unknown verb "onec" (did you mean "once"?)`},
		{[]string{"expalin"}, `(did you mean "explain"?)`},
		{[]string{"help", "valdate"}, `(did you mean "validate"?)`},
		{[]string{"plan", "--confg", "x.toml"}, `--confg: (did you mean "--config"?)`},
		{[]string{"once", "-jsno"}, `(did you mean "--json"?)`},
	}
	for _, c := range cases {
		code, _, errb := invokedAs(t, "rpengine", c.argv...)
		if code != exitUsage || !strings.Contains(errb, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.argv, code, errb, c.want)
		}
	}
	if _, _, errb := invokedAs(t, "rpengine", "frobnicate"); strings.Contains(errb, "did you mean") {
		t.Errorf("a word far from every verb got a suggestion: %q", errb)
	}
}

// -o json|table on plugin inspect and plugin test too; another value is
// a usage error.
func TestPluginSubcommandsTakeOutput(t *testing.T) {
	for _, sub := range []string{"inspect", "test"} {
		code, _, errb := invokedAs(t, "rpengine", "plugin", sub, "-o", "xml", "x.wasm")
		if code != exitUsage || !strings.Contains(errb, `-o "xml": want json or table`) {
			t.Errorf("plugin %s -o xml: exit %d, %q", sub, code, errb)
		}
		code, _, errb = invokedAs(t, "rpengine", "plugin", sub, "-o", "json", "no-such.wasm")
		if code == exitUsage || strings.Contains(errb, "flag provided but not defined") {
			t.Errorf("plugin %s -o json: refused as usage: %q", sub, errb)
		}
	}
}

// daemonAPI serves the ops API of engine id with one finished cycle,
// proving the key of a config whose state file is stateFile.
func daemonAPI(t *testing.T, id, stateFile string) string {
	t.Helper()
	o := ops.New(nil)
	o.Configure(ops.Info{EngineID: id})
	cfg := &config.Config{}
	cfg.Engine.ID, cfg.Engine.StateFile = id, stateFile
	key, err := newAPIKey(apiKeyPath(cfg))
	if err != nil {
		t.Fatal(err)
	}
	o.SetAPI(&ops.API{Key: key})
	addrs, stop, err := o.ServeWith(ops.ServeConfig{Listen: "127.0.0.1:0"}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	o.CycleDone(engine.Report{Nodes: 3, Unchanged: 3, Errors: []engine.Error{}}, time.Now())
	return addrs[0]
}

// status needs no etcd: for a single engine it asks its daemon; with none
// answering it says so.
func TestStatusOfASingleEngine(t *testing.T) {
	state := filepath.Join(t.TempDir(), "solo.json")
	addr := daemonAPI(t, "solo", state)
	cfg := &config.Config{}
	cfg.Engine.ID, cfg.Server.Listen, cfg.Engine.StateFile = "solo", addr, state
	var out bytes.Buffer
	if err := singleStatus(context.Background(), cfg, false, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"engine solo, state file " + state, "daemon: running at " + addr, "1 cycles", "nodes 3:", "unchanged 3"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("status lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := singleStatus(context.Background(), cfg, true, &out); err != nil {
		t.Fatal(err)
	}
	var st engineStatus
	if err := json.Unmarshal(out.Bytes(), &st); err != nil || st.Daemon != addr || st.Last == nil || st.Last.Report.Nodes != 3 {
		t.Fatalf("status -o json: %v %s", err, out.String())
	}
	cfg.Engine.ID = "other" // the daemon there is not this engine's
	out.Reset()
	if err := singleStatus(context.Background(), cfg, false, &out); err != nil || !strings.Contains(out.String(), "daemon: none answers at server.listen") {
		t.Fatalf("no daemon of this engine: %v\n%s", err, out.String())
	}
}

// once beside this engine's daemon points at the cycle-now API instead of
// "give each engine its own state_file".
func TestOnceBesideTheDaemonPointsAtTheAPI(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.json")
	addr := daemonAPI(t, "solo", state)
	cfg := &config.Config{}
	cfg.Engine.ID, cfg.Server.Listen, cfg.Engine.StateFile = "solo", addr, state
	inUse := fmt.Errorf("%w: state.json is in use by another engine process", engine.ErrStateInUse)
	err := besideDaemon(context.Background(), cfg, inUse)
	if err == nil || !strings.Contains(err.Error(), "curl -X POST http://"+addr+"/api/v1/cycle") {
		t.Fatalf("beside the daemon: %v", err)
	}
	cfg.Server.Listen = ""
	if err := besideDaemon(context.Background(), cfg, inUse); err != inUse {
		t.Fatalf("no daemon API: %v, want the state file's own error", err)
	}
}

// A build not made from a release tag says -dev: only release.sh, at a
// commit tagged v<version>, links release=true.
func TestVersionSaysDevUnlessReleased(t *testing.T) {
	if got := versionString("0.2.0", false); got != "0.2.0-dev" {
		t.Errorf("untagged: %q", got)
	}
	if got := versionString("0.2.0", true); got != "0.2.0" {
		t.Errorf("tagged: %q", got)
	}
	if _, out, _ := invokedAs(t, "rpengine", "--version"); !strings.HasPrefix(out, "rpengine "+version+"-dev\n") {
		t.Errorf("a test build's --version: %q", out)
	}
}

// A plan answered by the daemon says which config file the daemon loaded,
// and warns when the file on disk no longer holds it (an edited file the
// daemon has not reloaded: its plan is not the file's).
func TestPlanThroughTheDaemonNamesItsConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rpengine.toml")
	os.WriteFile(path, []byte("[engine]\nid = \"solo\"\n"), 0o644)
	o := ops.New(nil)
	o.Configure(ops.Info{EngineID: "solo", ConfigPath: path, ConfigSHA256: fileSHA256(path)})
	cfg := &config.Config{}
	cfg.Engine.ID, cfg.Engine.StateFile = "solo", filepath.Join(filepath.Dir(path), "state.json")
	key, err := newAPIKey(apiKeyPath(cfg))
	if err != nil {
		t.Fatal(err)
	}
	o.SetAPI(&ops.API{Plan: func(context.Context) (ops.Plan, error) { return onePlan{}, nil }, Key: key})
	addrs, stop, err := o.ServeWith(ops.ServeConfig{Listen: "127.0.0.1:0"}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	cfg.Server.Listen = addrs[0]
	plan := func() string {
		var logs bytes.Buffer
		var r engine.Report
		a := daemonAnswer{v: &r}
		asked, addr, err := fromDaemon(context.Background(), cfg, "plan", &a, slog.New(slog.DiscardHandler))
		if !asked || err != nil || r.Nodes != 7 {
			t.Fatalf("plan through the daemon: %v %v %+v", asked, err, r)
		}
		configNote(slog.New(slog.NewTextHandler(&logs, nil)), a, path, addr)
		return logs.String()
	}
	if logs := plan(); !strings.Contains(logs, "config="+path) || strings.Contains(logs, "differs") {
		t.Errorf("the file unchanged:\n%s", logs)
	}
	os.WriteFile(path, []byte("[engine]\nid = \"solo\"\ninterval = \"10s\"\n"), 0o644)
	if logs := plan(); !strings.Contains(logs, "level=WARN") || !strings.Contains(logs, "differs from the one the running engine loaded") {
		t.Errorf("the file edited since the daemon loaded it:\n%s", logs)
	}
}

// validate -o json: every check as {level, message}, the problems
// counted; the exit status as without it.
func TestValidateJSON(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.toml")
	os.WriteFile(bad, []byte("[engine]\ninterval = \"5 seconds\"\nconcurency = 3\n"), 0o644)
	code, out, errb := invokedAs(t, "rpengine", "validate", "--config", bad, "-o", "json")
	var r validateReport
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != exitUsage {
		t.Fatalf("exit %d, %v:\n%s\n%s", code, err, out, errb)
	}
	var msgs []string
	for _, c := range r.Checks {
		if c.Level == "error" {
			msgs = append(msgs, c.Message)
		}
	}
	all := strings.Join(msgs, "\n")
	if r.Problems != len(msgs) || r.ConfigProblems != 4 || !strings.Contains(all, "engine.interval") || !strings.Contains(all, `engine.concurency (did you mean engine.concurrency?)`) {
		t.Errorf("validate -o json: %+v", r)
	}
}
