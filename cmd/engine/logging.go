package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/rpengine/rpengine/internal/config"
	"github.com/rpengine/rpengine/internal/logformat"
)

// verbLogger is a verb's logger: in --log-format, else the config's
// [log] format, else text; to [log] file (reopened on SIGHUP until ctx
// ends) when the config names one, else to stderr. A file that cannot be
// opened is said on stderr, and stderr used.
func verbLogger(ctx context.Context, stderr io.Writer, a args) *slog.Logger {
	format, file := config.PeekLog(configOf(a))
	if a.logFormat != "" {
		format = a.logFormat
	}
	w := stderr
	if file != "" {
		f, err := logformat.OpenFile(file)
		if err != nil {
			fmt.Fprintf(stderr, "%v; logging to stderr\n", err)
		} else {
			f.Watch(ctx.Done())
			w = f
		}
	}
	return newLogger(w, format)
}

// osloHandler writes the oslo.log line format (log.format = "oslo"):
// what kolla-ansible's fluentd collects from /var/log/kolla/<service>/.
// Info and above, as the text handler; run's log.level filters first.
func osloHandler(w io.Writer) slog.Handler {
	return logformat.NewOslo(w, nil, "rpengine")
}
