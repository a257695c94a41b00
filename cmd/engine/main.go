// Command engine keeps OpenStack Placement's resource providers matching
// the nodes an inventory plugin reports. See README.md.
package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

// errUsage marks errors of the command line itself, errConfig those of
// the config file (exit status 2 for both).
var (
	errUsage  = errors.New("usage")
	errConfig = errors.New("config")
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	os.Exit(code)
}

// run runs the command line argv and returns the exit status (cli.go).
func run(ctx context.Context, argv []string, stdout, stderr io.Writer) int {
	return dispatch(ctx, argv, stdout, stderr)
}

func newLogger(w io.Writer, format string) *slog.Logger {
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, nil))
	}
	return slog.New(slog.NewTextHandler(w, nil))
}
