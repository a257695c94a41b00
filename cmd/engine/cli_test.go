package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files of the CLI tests")

// golden compares got with testdata/cli/NAME, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "cli", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestCLIGolden -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// The help texts and the usage errors, with their exit statuses.
func TestCLIGolden(t *testing.T) {
	cases := []struct {
		name   string
		argv   []string
		code   int
		stdout bool // the text goes to stdout (help asked for), else stderr
	}{
		{"help.txt", []string{"help"}, 0, true},
		{"help.txt", []string{"--help"}, 0, true},
		{"help.txt", []string{"-h"}, 0, true},
		{"help-plan.txt", []string{"help", "plan"}, 0, true},
		{"help-plan.txt", []string{"plan", "--help"}, 0, true},
		{"help-once.txt", []string{"once", "-h"}, 0, true},
		{"help-run.txt", []string{"help", "run"}, 0, true},
		{"help-validate.txt", []string{"validate", "--help"}, 0, true},
		{"help-show.txt", []string{"help", "show"}, 0, true},
		{"help-status.txt", []string{"help", "status"}, 0, true},
		{"help-plugin.txt", []string{"plugin", "--help"}, 0, true},
		{"help-explain.txt", []string{"help", "explain"}, 0, true},
		{"help-audit.txt", []string{"audit", "--help"}, 0, true},
		{"explain-no-node.txt", []string{"explain", "--config", "x.toml"}, 2, false},
		{"explain-two-nodes.txt", []string{"explain", "a", "--config", "x.toml", "b"}, 2, false},
		{"once-bad-output.txt", []string{"once", "-o", "yaml"}, 2, false},
		{"no-verb.txt", nil, 2, false},
		{"unknown-verb.txt", []string{"frobnicate"}, 2, false},
		{"run-json.txt", []string{"run", "--json"}, 2, false},
		{"validate-json.txt", []string{"validate", "--jsno", "--config", "x.toml"}, 2, false}, // a mistyped flag: the nearest named
		{"once-no-config.txt", []string{"once"}, 2, false},
		{"once-extra-arg.txt", []string{"once", "--config", "x.toml", "extra"}, 2, false},
	}
	// The default config, not the machine's /etc/rpengine (a package
	// install on the test machine would change the answer).
	t.Setenv("RPENGINE_CONFIG", "testdata/cli/no-such-config.toml")
	for _, c := range cases {
		t.Run(strings.Join(append([]string{"engine"}, c.argv...), " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), c.argv, &out, &errb)
			if code != c.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, c.code, errb.String())
			}
			got, other := out.String(), errb.String()
			if !c.stdout {
				got, other = other, got
			}
			if other != "" {
				t.Errorf("unexpected output on the other stream: %q", other)
			}
			golden(t, c.name, got)
		})
	}
}

// A config file that does not load is exit status 2, and named.
func TestBadConfigExitsTwo(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.toml")
	os.WriteFile(bad, []byte("[engine]\ninterval = \"5 seconds\"\n"), 0o644)
	for _, verb := range []string{"once", "plan", "validate", "show", "run"} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), []string{verb, "--config", bad}, &out, &errb); code != 2 ||
			!strings.Contains(errb.String(), "engine.interval") {
			t.Errorf("%s: exit %d, stderr %q", verb, code, errb.String())
		}
	}
}

func TestVersion(t *testing.T) {
	for _, argv := range [][]string{{"--version"}, {"version"}} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), argv, &out, &errb); code != 0 {
			t.Fatalf("exit %d", code)
		}
		re := regexp.MustCompile(`^engine \S+\ncommit: +\S+.*\ngo: +go1\.\d+.*\nwazero: +v1\.\d+\.\d+\nplugin ABI: +v1\n$`)
		if !re.MatchString(out.String()) {
			t.Errorf("%v:\n%s", argv, out.String())
		}
	}
}

// --config, else $RPENGINE_CONFIG, else /etc/rpengine/rpengine.toml.
func TestDefaultConfigPath(t *testing.T) {
	env := func(v string) func(string) string { return func(string) string { return v } }
	for _, c := range []struct{ flag, env, want string }{
		{"a.toml", "b.toml", "a.toml"}, {"", "b.toml", "b.toml"}, {"", "", "/etc/rpengine/rpengine.toml"},
	} {
		if got := configPath(c.flag, env(c.env)); got != c.want {
			t.Errorf("configPath(%q) with RPENGINE_CONFIG=%q: %q, want %q", c.flag, c.env, got, c.want)
		}
	}
}
