package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// zshInit is sourced by an interactive zsh in a pseudo-terminal: compinit,
// the script, and a compadd that prints what zsh's matching kept (between
// two marks) before adding it. Tab runs complete-word; Enter runs nothing.
const zshInit = `bindkey '^M' undefined
bindkey '^J' undefined
bindkey '^I' complete-word
autoload -U compinit && compinit -u -d "$ZDUMP"
source "$ZCOMP"
mark() { print -r -- '<<MARK>>' }
compprefuncs=(mark)
comppostfuncs=(mark exit)
compadd() {
	local -a hits
	if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then
		builtin compadd "$@"; return
	fi
	builtin compadd -A hits "$@"
	print -rl -- '<<HIT>>'${^hits}
	builtin compadd "$@"
}
`

// zshDrive types each line given, then Tab, into its own zsh (zpty), and
// prints "<<CASE>>" and the matches zsh offered.
const zshDrive = `zmodload zsh/zpty
for typed in "${@[2,-1]}"; do
	zpty z zsh -f -i
	zpty -w z "source ${(q)1}"
	zpty -n -w z "$typed"$'\t'
	out=""
	integer n=0
	while (( n++ < 400 )); do
		if zpty -r -t z chunk; then
			out+=$chunk
			[[ $out == *'<<MARK>>'*'<<MARK>>'* ]] && break
		else
			sleep 0.05
		fi
	done
	zpty -d z
	print -r -- '<<CASE>>'
	print -r -- "${out//$'\r'/}"
done
`

// zsh itself completes words with the script: the verbs after "engine ",
// a verb's flags and the values of -o, as its completion system answers
// at a prompt (not a stub of it).
func TestZshCompletesWords(t *testing.T) {
	zsh, err := exec.LookPath("zsh")
	if err != nil {
		t.Skip("zsh not installed (make deps installs it)")
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "_engine"), completionScript(t, "zsh"))
	writeFile(t, filepath.Join(dir, "init.zsh"), zshInit)
	writeFile(t, filepath.Join(dir, "drive.zsh"), zshDrive)
	cases := []struct{ typed, want string }{
		{"engine ", ""}, // every verb: checked below
		{"engine va", "validate"},
		{"engine once --n", "--node"},
		{"engine once -o ", "json table"},
		{"engine plugin in", "inspect"},
		{"engine completion ", "bash zsh"},
	}
	argv := []string{"-f", filepath.Join(dir, "drive.zsh"), filepath.Join(dir, "init.zsh")}
	for _, c := range cases {
		argv = append(argv, c.typed)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, zsh, argv...)
	cmd.Dir = t.TempDir() // no files to offer beside the words
	cmd.Env = append(cmd.Environ(), "ZDUMP="+filepath.Join(dir, "zcompdump"), "ZCOMP="+filepath.Join(dir, "_engine"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("zsh: %v\n%s", err, out)
	}
	answers := strings.Split(string(out), "<<CASE>>\n")[1:]
	if len(answers) != len(cases) {
		t.Fatalf("%d answers for %d cases:\n%s", len(answers), len(cases), out)
	}
	for i, c := range cases {
		var hits []string
		for _, l := range strings.Split(answers[i], "\n") {
			if h, ok := strings.CutPrefix(l, "<<HIT>>"); ok {
				hits = append(hits, h)
			}
		}
		if i == 0 {
			var names []string
			for _, v := range verbs {
				names = append(names, v.name)
			}
			slices.Sort(names)
			slices.Sort(hits)
			if !slices.Equal(hits, names) {
				t.Errorf("%q: zsh offers %v, want every verb %v", c.typed, hits, names)
			}
			continue
		}
		if got := strings.Join(hits, " "); got != c.want {
			t.Errorf("%q: zsh offers %q, want %q\n%s", c.typed, got, c.want, answers[i])
		}
	}
}
