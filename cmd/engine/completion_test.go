package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func completionScript(t *testing.T, shell string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"completion", shell}, &out, &errb); code != 0 {
		t.Fatalf("completion %s: exit %d\n%s", shell, code, errb.String())
	}
	return out.String()
}

// The bash script parses, offers every verb of the table (so a new verb
// cannot be missed), each verb's own flags and the values of -o and
// --log-format, as bash itself answers.
func TestBashCompletion(t *testing.T) {
	script := completionScript(t, "bash")
	path := filepath.Join(t.TempDir(), "engine.bash")
	writeFile(t, path, script)
	if out, err := exec.Command("bash", "-n", path).CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v\n%s", err, out)
	}
	complete := func(words ...string) string {
		t.Helper()
		var quoted []string
		for _, w := range words {
			quoted = append(quoted, "'"+w+"'")
		}
		cmd := exec.Command("bash", "-c", `source "$1"; COMP_WORDS=(`+strings.Join(quoted, " ")+`); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _engine; echo "${COMPREPLY[*]}"`, "bash", path)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("complete %v: %v\n%s", words, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	all := strings.Fields(complete("engine", ""))
	if len(all) != len(verbs) {
		t.Errorf("bash offers %d verbs, the table has %d: %v", len(all), len(verbs), all)
	}
	for _, v := range verbs {
		if !strings.Contains(" "+strings.Join(all, " ")+" ", " "+v.name+" ") || !strings.Contains(script, "\t"+v.name+") opts=") {
			t.Errorf("verb %s missing from the bash completion", v.name)
		}
	}
	for _, c := range []struct {
		words []string
		want  string
	}{
		{[]string{"engine", "va"}, "validate"},
		{[]string{"engine", "once", "--n"}, "--node"},
		{[]string{"engine", "once", "-o", ""}, "json table"},
		{[]string{"engine", "run", "--log-format", "j"}, "json"},
		{[]string{"engine", "plugin", "in"}, "inspect"},
		{[]string{"engine", "completion", ""}, "bash zsh"},
		{[]string{"engine", "help", "expl"}, "explain"},
		{[]string{"engine", "validate", "--j"}, "--json"}, // validate -o json too
		{[]string{"engine", "run", "--j"}, ""},            // run prints no answer
	} {
		if got := complete(c.words...); got != c.want {
			t.Errorf("%v: bash offers %q, want %q", c.words, got, c.want)
		}
	}
}

// The zsh script names every verb; zsh -n parses it where zsh is.
func TestZshCompletion(t *testing.T) {
	script := completionScript(t, "zsh")
	if !strings.HasPrefix(script, "#compdef engine\n") {
		t.Errorf("no #compdef line:\n%s", script)
	}
	for _, v := range verbs {
		if !strings.Contains(script, "\t"+v.name+") opts=(") {
			t.Errorf("verb %s missing from the zsh completion", v.name)
		}
	}
	if !strings.Contains(script, "-o|--o) compadd -- json table") {
		t.Errorf("no values for -o:\n%s", script)
	}
	zsh, err := exec.LookPath("zsh")
	if err != nil {
		t.Log("zsh not installed: its parse is not checked here")
		return
	}
	path := filepath.Join(t.TempDir(), "_engine")
	writeFile(t, path, script)
	if out, err := exec.Command(zsh, "-n", path).CombinedOutput(); err != nil {
		t.Fatalf("zsh -n: %v\n%s", err, out)
	}
	// Sourced after compinit, it registers itself for engine.
	out, err := exec.Command(zsh, "-c", `autoload -U compinit; compinit -u -d "$2"; source "$1"; print -r -- ${_comps[engine]}`,
		"zsh", path, filepath.Join(t.TempDir(), "zcompdump")).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "_engine" {
		t.Fatalf("zsh source: %v\n%s", err, out)
	}
}

func TestCompletionRefusesOtherShells(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"completion", "fish"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), `shell "fish"`) {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
}
