package bench

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"
)

// Section is a titled part of the report after the main table.
type Section struct {
	Title, Body string
}

// Write prints the report as Markdown.
func Write(w io.Writer, command string, rows []Row, notes []string, sections ...Section) {
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
	for _, s := range sections {
		fmt.Fprintf(w, "\n## %s\n\n%s\n", s.Title, strings.TrimSpace(s.Body))
	}
}
