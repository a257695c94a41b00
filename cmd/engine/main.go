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

	"github.com/coreos/go-systemd/v22/journal"

	"github.com/rpengine/rpengine/internal/ops"
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
	prog = progName(os.Args[0])
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	os.Exit(code)
}

// newLogger logs to w in format (text or json); on the journal's stream
// each line carries its priority (ops.JournalHandler).
func newLogger(w io.Writer, format string) *slog.Logger {
	h := func(w io.Writer) slog.Handler {
		switch format {
		case "json":
			return slog.NewJSONHandler(w, nil)
		case "oslo":
			return osloHandler(w)
		}
		return slog.NewTextHandler(w, nil)
	}
	if toJournal(w) {
		return slog.New(ops.JournalHandler(w, h))
	}
	return slog.New(h(w))
}

// toJournal says whether w is stderr and stderr is the journal's stream
// transport: $JOURNAL_STREAM names its device and inode (systemd.exec(5)),
// which go-systemd compares with stderr's own.
func toJournal(w io.Writer) bool {
	if f, ok := w.(*os.File); !ok || f != os.Stderr {
		return false
	}
	ok, err := journal.StderrIsJournalStream()
	return ok && err == nil
}
