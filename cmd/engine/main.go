// Command engine keeps OpenStack Placement's resource providers matching
// the nodes an inventory plugin reports. See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

const usage = `usage: engine <verb> [flags]

verbs:
  once      --config FILE [--json]   run one cycle; exit 0 when Placement matches
  run       --config FILE            run a cycle every [engine] interval until SIGTERM
  plan      --config FILE [--json]   print the writes a cycle would make; write nothing
  validate  --config FILE            check the config, the plugin and Placement
  show      --config FILE [--json]   list this engine's providers as Placement has them
  status    --config FILE [--json]   show the engines sharing the fleet through etcd ([coord])
  nova-config --config FILE          print the nova.conf settings and provider-config YAML to run beside nova-compute
  nova-standdown --config FILE       release this engine's holds, to hand the providers back to nova-compute alone
  plugin inspect [--json] FILE.wasm  print a plugin's ABI version, name, version and capabilities
`

// errUsage marks errors of the command line itself (exit status 2).
var errUsage = errors.New("usage")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	verb, rest := args[0], args[1:]
	fs := flag.NewFlagSet(verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "config file (TOML)")
	asJSON := fs.Bool("json", false, "print JSON")
	logFormat := fs.String("log-format", "text", "log format: text or json")
	if err := fs.Parse(rest); err != nil {
		return 2
	}
	log := newLogger(stderr, *logFormat)
	var err error
	switch verb {
	case "once":
		err = cmdOnce(ctx, *cfgPath, *asJSON, false, stdout, log)
	case "plan":
		err = cmdOnce(ctx, *cfgPath, *asJSON, true, stdout, log)
	case "run":
		err = cmdRun(ctx, *cfgPath, log)
	case "validate":
		err = cmdValidate(ctx, *cfgPath, stdout, log)
	case "show":
		err = cmdShow(ctx, *cfgPath, *asJSON, stdout, log)
	case "status":
		err = cmdStatus(ctx, *cfgPath, *asJSON, stdout)
	case "nova-config":
		err = cmdNovaConfig(ctx, *cfgPath, stdout, log)
	case "nova-standdown":
		err = cmdNovaStandDown(ctx, *cfgPath, stdout)
	case "plugin":
		err = cmdPlugin(ctx, fs.Args(), *asJSON, stdout, log)
	default:
		fmt.Fprintf(stderr, "unknown verb %q\n%s", verb, usage)
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "engine %s: %v\n", verb, err)
		return 2
	case errors.Is(err, errCycleFailed):
		return 1
	default:
		fmt.Fprintf(stderr, "engine %s: %v\n", verb, err)
		return 1
	}
}

func newLogger(w io.Writer, format string) *slog.Logger {
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, nil))
	}
	return slog.New(slog.NewTextHandler(w, nil))
}
