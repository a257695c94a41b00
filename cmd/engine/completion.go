package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"strings"
)

func init() {
	verbs = append(verbs, verb{name: "completion", synopsis: "bash|zsh",
		summary: "print a shell completion script for bash or zsh: the verbs, their flags and the values of -o and --log-format",
		example: "engine completion bash > /etc/bash_completion.d/engine", operands: 1,
		run: func(ctx context.Context, a args, out io.Writer, log *slog.Logger) error {
			if len(a.rest) != 1 {
				return fmt.Errorf("%w: name the shell: bash or zsh", errUsage)
			}
			return printCompletion(out, a.rest[0])
		}})
}

// flagValues are the values a flag takes, where they are few.
var flagValues = map[string][]string{"o": {"json", "table"}, "log-format": {"text", "json", "oslo"}}

// fileFlags take a path.
var fileFlags = []string{"config", "cache-dir"}

// verbCompletion is what a shell may offer after one verb.
type verbCompletion struct {
	name  string
	flags []string // with their dashes
	words []string // subcommands (plugin) or operands (help, completion)
}

// completions derives, from the verb table, what follows each verb: the
// flags a verb registers (or, for one that parses its own, those its
// synopsis names) and its subcommands. A new verb is in it by being in
// the table.
func completions() []verbCompletion {
	var names []string
	for _, v := range verbs {
		names = append(names, v.name)
	}
	out := make([]verbCompletion, 0, len(verbs))
	for _, v := range verbs {
		c := verbCompletion{name: v.name}
		if v.raw {
			c.flags, c.words = synopsisWords(v.synopsis)
		} else {
			v.flagSet(&args{}, io.Discard).VisitAll(func(f *flag.Flag) { c.flags = append(c.flags, dashes(f.Name)) })
		}
		switch v.name {
		case "help":
			c.words = names
		case "completion":
			c.words = []string{"bash", "zsh"}
		}
		out = append(out, c)
	}
	return out
}

var (
	synopsisFlag = regexp.MustCompile(`--?[a-z][a-z-]*`)
	subcommand   = regexp.MustCompile(`^[a-z][a-z-]+$`)
)

// synopsisWords reads the flags a synopsis names and its subcommands:
// the first word of each alternative ("inspect ... | test ...").
func synopsisWords(s string) (flags, words []string) {
	flags = synopsisFlag.FindAllString(s, -1)
	slices.Sort(flags)
	flags = slices.Compact(flags)
	if alts := strings.Split(s, "|"); len(alts) > 1 {
		for _, a := range alts {
			if w := strings.Fields(a); len(w) > 0 && subcommand.MatchString(w[0]) {
				words = append(words, w[0])
			}
		}
	}
	return flags, words
}

func dashes(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

func printCompletion(out io.Writer, shell string) error {
	switch shell {
	case "bash":
		_, err := io.WriteString(out, bashCompletion(completions()))
		return err
	case "zsh":
		_, err := io.WriteString(out, zshCompletion(completions()))
		return err
	}
	return fmt.Errorf("%w: shell %q: want bash or zsh", errUsage, shell)
}

// valueCases are the shell case arms for flags that take a value: the
// enumerated ones and the paths.
func valueCases(enum func(flag string, values []string) string, file func(flag string) string) string {
	var b strings.Builder
	for _, f := range slices.Sorted(maps.Keys(flagValues)) {
		b.WriteString(enum(f, flagValues[f]))
	}
	for _, f := range fileFlags {
		b.WriteString(file(f))
	}
	return b.String()
}

// both spellings the flag package takes: -name and --name.
func both(f string) string { return "-" + f + "|--" + f }

func bashCompletion(cs []verbCompletion) string {
	var names []string
	var arms strings.Builder
	for _, c := range cs {
		names = append(names, c.name)
		fmt.Fprintf(&arms, "\t%s) opts=%q ;;\n", c.name, strings.Join(append(slices.Clone(c.words), c.flags...), " "))
	}
	values := valueCases(func(f string, vs []string) string {
		return fmt.Sprintf("\t%s) COMPREPLY=($(compgen -W %q -- \"$cur\")); return ;;\n", both(f), strings.Join(vs, " "))
	}, func(f string) string {
		return fmt.Sprintf("\t%s) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n", both(f))
	})
	return fmt.Sprintf(`# bash completion for %[4]s, from "%[4]s completion bash"
_engine() {
	local cur prev opts
	cur="${COMP_WORDS[COMP_CWORD]}"
	prev="${COMP_WORDS[COMP_CWORD-1]}"
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W %[1]q -- "$cur"))
		return
	fi
	case "$prev" in
%[2]s	esac
	case "${COMP_WORDS[1]}" in
%[3]s	*) opts="" ;;
	esac
	COMPREPLY=($(compgen -W "$opts" -- "$cur"))
	[ ${#COMPREPLY[@]} -eq 0 ] && COMPREPLY=($(compgen -f -- "$cur"))
	return 0
}
complete -F _engine %[4]s
`, strings.Join(names, " "), values, arms.String(), prog)
}

func zshCompletion(cs []verbCompletion) string {
	var names []string
	var arms strings.Builder
	for _, c := range cs {
		names = append(names, c.name)
		fmt.Fprintf(&arms, "\t%s) opts=(%s) ;;\n", c.name, strings.Join(append(slices.Clone(c.words), c.flags...), " "))
	}
	values := valueCases(func(f string, vs []string) string {
		return fmt.Sprintf("\t%s) compadd -- %s; return ;;\n", both(f), strings.Join(vs, " "))
	}, func(f string) string {
		return fmt.Sprintf("\t%s) _files; return ;;\n", both(f))
	})
	return fmt.Sprintf(`#compdef %[4]s
# zsh completion for %[4]s, from "%[4]s completion zsh"
_engine() {
	local -a opts # words and CURRENT are zsh's: the command line
	if (( CURRENT == 2 )); then
		compadd -- %[1]s
		return
	fi
	case "${words[CURRENT-1]}" in
%[2]s	esac
	case "${words[2]}" in
%[3]s	*) opts=() ;;
	esac
	compadd -a opts
	_files
}
if [ "$funcstack[1]" = "_engine" ]; then
	_engine "$@"
else
	compdef _engine %[4]s
fi
`, strings.Join(names, " "), values, arms.String(), prog)
}
