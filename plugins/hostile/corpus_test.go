//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/guesttest"
	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// The hostile-answer corpus: the worst answers found so far, each given to
// the real engine binary (`engine once --json`) against a fake Placement.
// Each must be refused with one bounded message, cause no write, keep
// every process of the engine within the plugin's memory limit + 64 MiB,
// and leave the next cycle with a sound plugin working.
//
// The peak RSS is the kernel's (wait4's ru_maxrss): the larger of the
// engine's and its plugin host's peaks, so each of them is within it.

const (
	corpusSlack   = 64 << 20 // RSS above the plugin's memory limit allowed
	corpusMaxJSON = 64 << 10 // largest `once --json` report allowed
)

type answerCase struct {
	name   string
	memory int64 // plugin.memory_limit
	repeat map[string]any
	attack map[string]any // a hostile plugin's config instead of repeat
	want   string         // in the one error
}

// perNode names the cases over a per-node limit: each node is
// quarantined alone and every error (the report keeps 50, then counts
// the rest) names the limit; the answer itself is not refused.
var perNode = map[string]bool{"a 100 MiB answer of 1 MiB names": true}

func answerCorpus() []answerCase {
	const uuid = "5d7e0f5c-0000-4000-8000-000000000001"
	head := `{"nodes":[`
	tail := `],"complete":true}`
	return []answerCase{
		{"2,000,000 empty nodes", 128 << 20,
			map[string]any{"head": head, "item": "{}", "sep": ",", "count": 2_000_000, "tail": tail}, nil, "nodes"},
		{"10,000,000 empty nodes", 128 << 20,
			map[string]any{"head": head, "item": "{}", "sep": ",", "count": 10_000_000, "tail": tail}, nil, "nodes"},
		{"a 100 MiB resource class", 256 << 20,
			map[string]any{"head": head + `{"uuid":"` + uuid + `","resource_class":"`,
				"item": strings.Repeat("x", 1024), "count": 100 << 10, "tail": `"}` + tail}, nil, "resource_class"},
		{"10,000 custom traits on one node", 128 << 20,
			map[string]any{"head": head + `{"uuid":"` + uuid + `","resource_class":"gold","traits":[`,
				"item": `"CUSTOM_T{i}"`, "sep": ",", "count": 10_000, "tail": `]}` + tail}, nil, "traits"},
		{"a 100 MiB error", 256 << 20,
			map[string]any{"head": `{"error":"`, "item": strings.Repeat("e", 1024), "count": 100 << 10, "tail": `"}`}, nil, "eeee"},
		// Memory growth: the engine tree peaked at 547-641 MiB for these.
		{"a plugin allocating without end", 128 << 20, nil, map[string]any{"attack": "hog"}, "out of memory"},
		{"a 100 MiB answer of 1 MiB names", 128 << 20, nil, map[string]any{"attack": "huge", "mib": 100}, "max_field_length"},
		{"live data near the limit", 128 << 20, nil, map[string]any{"attack": "near_limit", "live_mib": 100, "churn_mib": 400}, "list_nodes"},
	}
}

func TestHostileAnswersCostABoundedAmount(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the engine binary on answers of up to 100 MiB")
	}
	bin := engineBin(t)
	rawWasm, hostileWasm := raw()(t), guesttest.Build(t, ".")
	fake := placementfake.New(placementfake.WithSeed(3))
	defer fake.Close()
	dir := t.TempDir()
	for _, c := range answerCorpus() {
		t.Run(c.name, func(t *testing.T) {
			fake.ResetRequests()
			wasm, pc := rawWasm, map[string]any{"repeat": c.repeat}
			if c.attack != nil {
				wasm, pc = hostileWasm, c.attack
			}
			cfg := writeConfig(t, dir, fake.URL(), wasm, c.memory, pc)
			res := runOnce(t, bin, cfg)
			t.Logf("peak RSS %d MiB (limit %d MiB + %d MiB), report %d bytes, stderr %d bytes",
				res.maxRSS>>20, c.memory>>20, corpusSlack>>20, len(res.stdout), len(res.stderr))
			if res.maxRSS > c.memory+corpusSlack {
				t.Errorf("peak RSS %d MiB exceeds the plugin's limit %d MiB + %d MiB", res.maxRSS>>20, c.memory>>20, corpusSlack>>20)
			}
			if len(res.stdout) > corpusMaxJSON || len(res.stderr) > corpusMaxJSON {
				t.Errorf("report %d bytes, stderr %d bytes; want <= %d each", len(res.stdout), len(res.stderr), corpusMaxJSON)
			}
			var r struct{ Errors []json.RawMessage }
			if err := json.Unmarshal(res.stdout, &r); err != nil {
				t.Fatalf("report is not JSON: %v: %.300s", err, res.stdout)
			}
			if perNode[c.name] {
				checkPerNode(t, r.Errors, c.want)
			} else if len(r.Errors) != 1 || !strings.Contains(string(r.Errors[0]), c.want) {
				t.Errorf("%d errors (first %.300s), want one mentioning %q", len(r.Errors), first(r.Errors), c.want)
			}
			for _, req := range fake.Requests() {
				if req.Method != "GET" {
					t.Errorf("Placement received %s %s", req.Method, req.Path)
				}
			}
		})
	}
	t.Run("the next cycle with a sound plugin", func(t *testing.T) {
		cfg := writeConfig(t, dir, fake.URL(), guesttest.Build(t, "../fake"), 128<<20, map[string]any{"nodes": 20, "seed": 4})
		res := runOnce(t, bin, cfg)
		var r struct {
			Created int
			Errors  []json.RawMessage
		}
		if err := json.Unmarshal(res.stdout, &r); err != nil || r.Created != 20 || len(r.Errors) > 0 {
			t.Fatalf("report %s (%v), stderr %s", res.stdout, err, res.stderr)
		}
	})
}

func first(s []json.RawMessage) string {
	if len(s) == 0 {
		return ""
	}
	return string(s[0])
}

type onceResult struct {
	stdout, stderr []byte
	maxRSS         int64
}

// runOnce runs `engine once --json` through a spawner (this test binary
// in spawnEnv mode). Linux starts a child's peak RSS at its parent's when
// the parent execs it from a vfork (Go does), so a child of this test
// process, which decodes large reports, would show the test's peak.
func runOnce(t *testing.T, bin, cfg string) onceResult {
	t.Helper()
	rssFile := filepath.Join(t.TempDir(), "rss")
	argv, _ := json.Marshal([]string{bin, "once", "--json", "--config", cfg})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), spawnEnv+"="+string(argv), spawnRSSEnv+"="+rssFile)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if _, exit := err.(*exec.ExitError); err != nil && !exit {
		t.Fatal(err)
	}
	var rss int64
	if b, err := os.ReadFile(rssFile); err != nil {
		t.Fatalf("spawner: %v; stderr %.2000s", err, errb.Bytes())
	} else if _, err := fmt.Sscan(string(b), &rss); err != nil {
		t.Fatal(err)
	}
	return onceResult{out.Bytes(), errb.Bytes(), rss}
}

const (
	spawnEnv    = "RPENGINE_TEST_SPAWN"     // JSON argv to run
	spawnRSSEnv = "RPENGINE_TEST_SPAWN_RSS" // file to write its peak RSS (bytes) to
)

// In spawner mode this test binary runs one command with its own streams
// and records the peak RSS of it and its descendants (wait4's ru_maxrss).
func init() {
	raw, ok := os.LookupEnv(spawnEnv)
	if !ok {
		return
	}
	var argv []string
	if err := json.Unmarshal([]byte(raw), &argv); err != nil {
		panic(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		panic(err)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if err := os.WriteFile(os.Getenv(spawnRSSEnv), []byte(fmt.Sprint(ru.Maxrss<<10)), 0o644); err != nil {
		panic(err)
	}
	os.Exit(code)
}

func writeConfig(t *testing.T, dir, placementURL, wasm string, memory int64, pluginConfig map[string]any) string {
	t.Helper()
	pc, err := json.Marshal(pluginConfig)
	if err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`[engine]
id = "corpus"
[auth]
method = "noauth"
[placement]
endpoint = %q
token = "admin"
[plugin]
path = %q
memory_limit = %d
cache_dir = %q
config = %s
`, placementURL, wasm, memory, guesttest.CacheDir(), tomlInline(t, pc))
	p := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// tomlInline writes a JSON object as a TOML inline table; JSON strings
// are valid TOML basic strings, and the corpus has no arrays or floats.
func tomlInline(t *testing.T, raw []byte) string {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("{")
	first := true
	for k, v := range m {
		if !first {
			b.WriteString(", ")
		}
		first = false
		fmt.Fprintf(&b, "%s = ", k)
		switch v := v.(type) {
		case map[string]any:
			sub, _ := json.Marshal(v)
			b.WriteString(tomlInline(t, sub))
		case string:
			s, _ := json.Marshal(v)
			b.Write(s)
		default:
			fmt.Fprint(&b, v)
		}
	}
	b.WriteString("}")
	return b.String()
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// engineBin returns the engine binary: RPENGINE_ENGINE_BIN (make sets it)
// or a fresh build.
func engineBin(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("RPENGINE_ENGINE_BIN"); p != "" {
		return p
	}
	binOnce.Do(func() {
		binPath = filepath.Join(os.TempDir(), "rpengine-hostile-engine")
		cmd := exec.Command("go", "build", "-o", binPath, "../../cmd/engine")
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("build engine: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// Whatever a plugin prints reaches the engine's streams only as an
// escaped attribute of a record tagged with its name: a line forged to
// look like the engine's never starts a line of its own.
func TestPluginOutputNeverReachesTheEngineStreamsRaw(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the engine binary")
	}
	const forged = `level=INFO msg="provider deleted: node proven gone" node=5d7e0f5c-0000-4000-8000-000000000001`
	fake := placementfake.New()
	defer fake.Close()
	cfg := writeConfig(t, t.TempDir(), fake.URL(), guesttest.Build(t, "."), 128<<20,
		map[string]any{"attack": "print", "body": forged + "\n" + forged, "lines": 2})
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			cmd := exec.Command(engineBin(t), "once", "--log-format", format, "--config", cfg)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v: %s", err, errb.Bytes())
			}
			tagged := 0
			for _, stream := range [][]byte{out.Bytes(), errb.Bytes()} {
				for _, line := range strings.Split(string(stream), "\n") {
					if !strings.Contains(line, "provider deleted: node proven gone") {
						continue
					}
					if strings.Contains(line, `msg="provider deleted`) || !strings.Contains(line, "hostile") ||
						!strings.Contains(line, "plugin output") {
						t.Errorf("plugin output outside a tagged record: %q", line)
					}
					tagged++
				}
			}
			if tagged != 8 { // 2 lines × 2 prints × stdout and stderr
				t.Errorf("%d tagged records of the plugin's output, want 8; stderr:\n%s", tagged, errb.Bytes())
			}
		})
	}
}

// checkPerNode wants a quarantine per node, each naming the limit, and
// the report's cap line for the rest.
func checkPerNode(t *testing.T, errs []json.RawMessage, want string) {
	t.Helper()
	if len(errs) < 2 {
		t.Errorf("%d errors, want one per node", len(errs))
	}
	for i, e := range errs {
		last := i == len(errs)-1 && strings.Contains(string(e), "more errors")
		if !last && (!strings.Contains(string(e), want) || !strings.Contains(string(e), `"quarantined"`)) {
			t.Errorf("error %d is %.300s, want a quarantine naming %q", i, e, want)
		}
	}
}
