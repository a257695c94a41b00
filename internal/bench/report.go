package bench

import (
	"fmt"
	"io"
	"runtime"
	"time"
)

// Write prints the report as Markdown.
func Write(w io.Writer, command string, rows []Row, notes []string) {
	fmt.Fprintf(w, "# Benchmarks\n\nProduced by `%s` on %s (%s/%s, %d CPUs, %s).\n\n",
		command, time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())
	fmt.Fprintln(w, "| figure | fleet | value | goal | met |\n|---|---|---|---|---|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", r.Metric, r.Fleet, r.Value, r.Goal, r.Met)
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range notes {
			fmt.Fprintf(w, "- %s\n", n)
		}
	}
}
