package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rpengine/rpengine/internal/config"
)

// Exit statuses scripts can rely on (README, "Exit status").
const (
	exitOK     = 0 // done; for once: Placement matches
	exitFailed = 1 // the cycle reported errors, or a service or the plugin failed
	exitUsage  = 2 // the command line or the config file is wrong
)

// args are the values of a verb's flags; each verb registers only its own.
type args struct {
	config    string
	json      bool
	logFormat string
	node      string
	nodes     []string // once --node, repeatable or a comma list
	output    string   // -o: json or table
	observe   bool     // run --observe: engine.mode = "observe" whatever the file says
	rest      []string // what follows the flags (plugin's subcommand, explain's node)
}

// streams is a verb's stdout with its stderr beside it: the answer goes
// to stdout, the error lines of a report to stderr (stderrOf).
type streams struct {
	io.Writer
	stderr io.Writer
}

// stderrOf is where w's error lines go: its stderr, or w itself.
func stderrOf(w io.Writer) io.Writer {
	if s, ok := w.(streams); ok {
		return s.stderr
	}
	return w
}

// printer prints a verb's answer as JSON (--json, -o json) or as text.
type printer struct {
	w    io.Writer
	json bool
}

func (a args) printer(w io.Writer) printer { return printer{w, a.json || a.output == "json"} }

func (p printer) print(v any, text func()) error {
	if p.json {
		return printJSON(p.w, v)
	}
	text()
	return nil
}

// prog is the name the binary was invoked by (main sets it from
// os.Args[0]): "rpengine" as the package installs it, "engine" from a
// build. Help, errors, --version and completion say it.
var prog = "engine"

// progName is the base name of argv0, or "engine" when it has none.
func progName(argv0 string) string {
	if b := filepath.Base(argv0); b != "" && b != "." && b != "/" {
		return b
	}
	return "engine"
}

// asInvoked rewrites a text's leading "engine " (an example, a usage
// line) to the name the binary was invoked by.
func asInvoked(s string) string {
	if rest, ok := strings.CutPrefix(s, "engine "); ok {
		return prog + " " + rest
	}
	return s
}

// defaultConfig is where the config is when --config is not given.
const defaultConfig = "/etc/rpengine/rpengine.toml"

// configPath is --config, else $RPENGINE_CONFIG, else defaultConfig.
func configPath(flag string, getenv func(string) string) string {
	if flag != "" {
		return flag
	}
	if p := getenv("RPENGINE_CONFIG"); p != "" {
		return p
	}
	return defaultConfig
}

// verb is one subcommand: its flags, its help and what it runs.
type verb struct {
	name     string
	synopsis string // after "engine NAME"
	summary  string
	example  string
	flags    []string // of config, json, log-format, node
	raw      bool     // parses its own arguments (plugin)
	operands int      // how many arguments may follow, among the flags (explain: 1)
	run      func(ctx context.Context, a args, out io.Writer, log *slog.Logger) error
}

var verbs = []verb{
	{name: "once", synopsis: "--config FILE [--json] [--node UUID|NAME ...]", summary: "run one cycle (with --node, writing only those nodes' providers); exit 0 when Placement matches",
		example: "engine once --config /etc/rpengine/rpengine.toml --node rack1-n07,rack1-n08",
		flags:   []string{"config", "json", "nodes", "log-format"},
		run: func(ctx context.Context, a args, out io.Writer, log *slog.Logger) error {
			return cmdOnce(ctx, a.config, a.json, a.nodes, out, log)
		}},
	{name: "run", synopsis: "--config FILE [--observe]", summary: "run a cycle every [engine] interval until SIGTERM (the daemon); --observe writes nothing and reports the drift (docs/OBSERVE.md)",
		example: "engine run --config /etc/rpengine/rpengine.toml --log-format json",
		flags:   []string{"config", "observe", "log-format"},
		run: func(ctx context.Context, a args, out io.Writer, log *slog.Logger) error {
			return cmdRun(ctx, a.config, a.observe, log)
		}},
	{name: "plan", synopsis: "--config FILE [--json] [--node UUID|NAME]", summary: "print what a cycle would change, node by node; write nothing",
		example: "engine plan --config /etc/rpengine/rpengine.toml --node rack1-n07",
		flags:   []string{"config", "json", "node", "log-format"},
		run: func(ctx context.Context, a args, out io.Writer, log *slog.Logger) error {
			return cmdPlan(ctx, a.config, a.json, a.node, out, log)
		}},
	{name: "explain", synopsis: "NODE [--config FILE] [-o json|table]", summary: "say why one node (uuid or name) is as it is: the plugin's record, Placement's provider and allocations, the rule that decides it with its values, proofs, holds and the next writes; write nothing",
		example: "engine explain rack1-n07 -o json",
		flags:   []string{"config", "json", "log-format"}, operands: 1,
		run: func(ctx context.Context, a args, out io.Writer, log *slog.Logger) error {
			return cmdExplain(ctx, a, a.printer(out), log)
		}},
	{name: "audit", synopsis: "[--config FILE] [-o json|table]", summary: "compare the plugin's nodes with Placement and write nothing: missing providers, providers without a node, inventory, reserved, trait and aggregate drift, holds, foreign consumers, ownership conflicts; exit 0 clean, 3 drift found",
		example: "engine audit -o json | jq .findings",
		flags:   []string{"config", "json", "log-format"},
		run: func(ctx context.Context, a args, out io.Writer, log *slog.Logger) error {
			return cmdAudit(ctx, a, a.printer(out), log)
		}},
	{name: "validate", synopsis: "--config FILE [-o json|table]", summary: "list every problem found offline (the config's keys, the plugin and its grants, the state file's path), then check the identity, Placement, nova's writers and the plugin's services; exit 2 if the config is wrong, 1 if anything else is",
		example: "engine validate --config /etc/rpengine/rpengine.toml",
		flags:   []string{"config", "json", "log-format"},
		run: func(ctx context.Context, a args, out io.Writer, log *slog.Logger) error {
			return cmdValidate(ctx, a.config, a.json, out, log)
		}},
	{name: "show", synopsis: "--config FILE [-o json|table] [--node UUID|NAME]", summary: "list this engine's providers as Placement holds them: name, inventory with reserved, min, max, step and allocation ratio, traits and aggregates, sorted by name",
		example: "engine show --config /etc/rpengine/rpengine.toml --node rack1-n07 -o json",
		flags:   []string{"config", "json", "node"},
		run: func(ctx context.Context, a args, out io.Writer, log *slog.Logger) error {
			return cmdShow(ctx, a.config, a.printer(out), a.node, log)
		}},
	{name: "status", synopsis: "--config FILE [-o json|table]", summary: "show the engines sharing the fleet through etcd ([coord]); without etcd, this engine's daemon and its last cycle",
		example: "engine status --config /etc/rpengine/rpengine.toml",
		flags:   []string{"config", "json"},
		run: func(ctx context.Context, a args, out io.Writer, log *slog.Logger) error {
			return cmdStatus(ctx, a.config, a.json, out)
		}},
	{name: "pause", synopsis: pauseUsage, summary: "pause one node's provider in the running daemon: nothing is written to it (an operator's change to it stays) and it is never deleted, until resumed; kept in the ownership record across restarts and take-overs",
		example: "engine pause 5a8b3b8e-7f38-4f5c-9c2b-2d1f3d0c6a11 --for 2h --reason \"ratio raised for bug 2104040\"",
		raw:     true,
		run: func(ctx context.Context, a args, out io.Writer, log *slog.Logger) error {
			return cmdPause(ctx, a.rest, false, out, log)
		}},
	{name: "resume", synopsis: "NODE [--config FILE]", summary: "lift a node's pause in the running daemon: its next cycle applies the rules again",
		example: "engine resume 5a8b3b8e-7f38-4f5c-9c2b-2d1f3d0c6a11",
		raw:     true,
		run: func(ctx context.Context, a args, out io.Writer, log *slog.Logger) error {
			return cmdPause(ctx, a.rest, true, out, log)
		}},
	{name: "reown", synopsis: reownUsage, summary: "after a lost ownership record: list the traits and aggregates on this engine's providers that nothing explains; remove those named (--yes: all)",
		example: "engine reown --config /etc/rpengine/rpengine.toml CUSTOM_GPU",
		raw:     true,
		run: func(ctx context.Context, a args, out io.Writer, log *slog.Logger) error {
			return cmdReown(ctx, a.rest, out, log)
		}},
	{name: "plugin", synopsis: "inspect [-o json|table] [--timeout D] FILE.wasm | test [-o json|table] [--config FILE] FILE.wasm | new NAME [DIR] | compile [--config FILE] [--cache-dir DIR] [FILE.wasm ...]", summary: "print a plugin's ABI version, name, version and capabilities, run the conformance suite against it (exit 1 on a FAIL), write a new plugin with the SDK beside it (docs/PLUGIN-SDK.md), or compile plugins ahead into the cache the engine starts from",
		example: "engine plugin inspect -o json /usr/lib/rpengine/ironic.wasm",
		raw:     true,
		run: func(ctx context.Context, a args, out io.Writer, log *slog.Logger) error {
			return cmdPlugin(ctx, a.rest, false, out, log)
		}},
	{name: "help", synopsis: "[VERB]", summary: "print this help, or a verb's", example: "engine help plan", raw: true},
	{name: "version", synopsis: "", summary: "print the version, commit, Go, wazero and plugin ABI versions (also --version)",
		example: "engine --version", raw: true},
}

func findVerb(name string) (verb, bool) {
	for _, v := range verbs {
		if v.name == name {
			return v, true
		}
	}
	return verb{}, false
}

// flagSet registers v's flags only.
func (v verb) flagSet(a *args, w io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(prog+" "+v.name, flag.ContinueOnError)
	fs.SetOutput(w)
	for _, f := range v.flags {
		switch f {
		case "config":
			fs.StringVar(&a.config, "config", "", "the config file (TOML); default $RPENGINE_CONFIG, then "+defaultConfig)
		case "json":
			fs.BoolVar(&a.json, "json", false, "print JSON (schema: docs/REPORT.md); the same as -o json")
			fs.StringVar(&a.output, "o", "table", "output: json or table")
		case "log-format":
			fs.StringVar(&a.logFormat, "log-format", "", "log format: text, json or oslo (default: [log] format, else text)")
		case "observe":
			fs.BoolVar(&a.observe, "observe", false, "observe mode, as engine.mode = \"observe\": every cycle a plan, nothing written, the drift reported; kept across reloads")
		case "node":
			fs.StringVar(&a.node, "node", "", "only this node: its uuid or its name")
		case "nodes":
			fs.Func("node", "write only these nodes' providers: a uuid or a name; repeat it or give a comma list", func(s string) error {
				for _, n := range strings.Split(s, ",") {
					if n = strings.TrimSpace(n); n != "" {
						a.nodes = append(a.nodes, n)
					}
				}
				return nil
			})
		}
	}
	fs.Usage = func() { v.help(w, fs) }
	return fs
}

// help prints a verb's usage, its flags and an example.
func (v verb) help(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: %s %s %s\n\n%s.\n", prog, v.name, v.synopsis, capitalise(v.summary))
	if fs != nil && len(v.flags) > 0 {
		fmt.Fprintln(w, "\nflags:")
		fs.PrintDefaults()
	}
	fmt.Fprintf(w, "\nexample:\n  %s\n", asInvoked(v.example))
}

func capitalise(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// usage is the overview `engine help` prints.
func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: "+prog+" VERB [flags]\n\nKeeps OpenStack Placement's resource providers matching what an inventory plugin reports.\n\nverbs:")
	width := 0
	for _, v := range verbs {
		width = max(width, len(v.name))
	}
	for _, v := range verbs {
		fmt.Fprintf(w, "  %-*s  %s\n", width, v.name, v.summary)
	}
	fmt.Fprintln(w, `
"`+prog+` help VERB" or "`+prog+` VERB --help" shows a verb's flags and an example.

exit status: 0 done (once: Placement matches); 1 the cycle reported errors, or a
service or the plugin failed; 2 the command line or the config file is wrong;
3 audit found drift.`)
}

// run parses the command line argv and runs the verb; it returns the
// exit status.
func run(ctx context.Context, argv []string, stdout, stderr io.Writer) int {
	if len(argv) == 0 {
		usage(stderr)
		return exitUsage
	}
	name, rest := argv[0], argv[1:]
	switch name {
	case "-h", "-help", "--help":
		name = "help"
	case "-version", "--version":
		name = "version"
	}
	v, ok := findVerb(name)
	if !ok {
		fmt.Fprintf(stderr, "%s: unknown verb %q%s\n\n", prog, name, didYouMean(name, verbNames()))
		usage(stderr)
		return exitUsage
	}
	switch v.name {
	case "help":
		return help(rest, stdout, stderr)
	case "version":
		printVersion(stdout)
		return exitOK
	}
	var a args
	if v.raw {
		if asksHelp(rest[:min(len(rest), 1)]) || len(rest) > 1 && asksHelp(rest[1:2]) {
			v.help(stdout, nil)
			return exitOK
		}
		a.rest = rest
	} else {
		if asksHelp(rest) {
			v.help(stdout, v.flagSet(&args{}, stdout))
			return exitOK
		}
		if code, ok := v.parse(&a, rest, stderr); !ok {
			return code
		}
	}
	log := verbLogger(ctx, stderr, a)
	if id := config.PeekID(configOf(a)); id != "" {
		log = log.With("engine", id) // on every record of the verb, as the daemon's
	}
	return exitStatus(v.name, v.run(ctx, a, streams{stdout, stderr}, log), stderr)
}

// configOf is the config file a verb was given: --config, or for a verb
// that parses its own arguments the --config among them.
func configOf(a args) string {
	if a.config != "" {
		return a.config
	}
	for i, s := range a.rest {
		for _, f := range []string{"-config", "--config"} {
			if s == f && i+1 < len(a.rest) {
				return a.rest[i+1]
			}
			if v, ok := strings.CutPrefix(s, f+"="); ok {
				return v
			}
		}
	}
	return ""
}

// parse reads v's flags and operands, which may come in any order.
func (v verb) parse(a *args, argv []string, stderr io.Writer) (int, bool) {
	fs := v.flagSet(a, stderr)
	for {
		if err := fs.Parse(argv); err != nil {
			// The flag package said why, and printed the verb's help.
			if hint := flagSuggestion(err, fs); hint != "" {
				fmt.Fprintf(stderr, "%s %s: %s\n", prog, v.name, hint)
			}
			return exitUsage, false
		}
		if fs.NArg() == 0 {
			break
		}
		if len(a.rest) == v.operands {
			fmt.Fprintf(stderr, "%s %s: unexpected argument %q\n", prog, v.name, fs.Arg(0))
			return exitUsage, false
		}
		a.rest, argv = append(a.rest, fs.Arg(0)), fs.Args()[1:]
	}
	if a.output != "json" && a.output != "table" && a.output != "" {
		fmt.Fprintf(stderr, "%s %s: -o %q: want json or table\n", prog, v.name, a.output)
		return exitUsage, false
	}
	a.json = a.json || a.output == "json"
	if slices.Contains(v.flags, "config") {
		a.config = configPath(a.config, os.Getenv)
	}
	return 0, true
}

// asksHelp says whether the flags ask for help: then the help goes to
// stdout and the exit status is 0, as with "engine help VERB".
func asksHelp(argv []string) bool {
	for _, a := range argv {
		switch a {
		case "-h", "-help", "--help":
			return true
		case "--":
			return false
		}
	}
	return false
}

func help(rest []string, stdout, stderr io.Writer) int {
	if len(rest) == 0 {
		usage(stdout)
		return exitOK
	}
	v, ok := findVerb(rest[0])
	if !ok {
		fmt.Fprintf(stderr, "%s help: unknown verb %q%s\n", prog, rest[0], didYouMean(rest[0], verbNames()))
		return exitUsage
	}
	if v.raw {
		v.help(stdout, nil)
	} else {
		v.help(stdout, v.flagSet(&args{}, stdout))
	}
	return exitOK
}

// exitStatus reports err and maps it to the exit status.
func exitStatus(verb string, err error, stderr io.Writer) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errCycleFailed):
		return exitFailed // the report said why
	case errors.Is(err, errDrift):
		return exitDrift // the audit listed it
	case errors.Is(err, errUsage), errors.Is(err, errConfig):
		fmt.Fprintf(stderr, "%s %s: %v\n", prog, verb, err)
		return exitUsage
	}
	fmt.Fprintf(stderr, "%s %s: %v\n", prog, verb, err)
	return exitFailed
}
