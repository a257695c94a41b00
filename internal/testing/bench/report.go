package bench

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

// Section is a titled part of the report after the main table; one
// without a title is included as it is.
type Section struct {
	Title, Body string
}

// Stamped is a row with when it was measured (UTC, and the load
// average then) and the command that measures it again.
type Stamped struct {
	Row
	At, Command string
}

// Stamp stamps rows measured now by command.
func Stamp(command string, rows ...Row) []Stamped {
	at := time.Now().UTC().Format("2006-01-02 15:04")
	if l := strings.Fields(LoadAverage()); len(l) > 0 {
		at += ", load " + l[0]
	}
	out := make([]Stamped, len(rows))
	for i, r := range rows {
		out[i] = Stamped{r, at, command}
	}
	return out
}

// Machine is what the report says about where and how long it ran.
type Machine struct {
	LoadBefore, LoadAfter string
	Took                  time.Duration
}

// LoadAverage is /proc/loadavg's first three fields ("" elsewhere).
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// procField is the value of the first "key: value" line of a /proc file.
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func (m Machine) describe() string {
	s := fmt.Sprintf("%s/%s, %d CPUs", runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	if cpu := procField("/proc/cpuinfo", "model name"); cpu != "" {
		s += " (" + cpu + ")"
	}
	if mem := procField("/proc/meminfo", "MemTotal"); mem != "" {
		s += ", " + mem + " memory"
	}
	s += ", " + runtime.Version()
	if m.LoadBefore != "" {
		s += fmt.Sprintf("; load average %s at the start, %s at the end", m.LoadBefore, m.LoadAfter)
	}
	if m.Took > 0 {
		s += fmt.Sprintf("; the whole run took %.1f minutes", m.Took.Minutes())
	}
	return s
}

// Write prints the report as Markdown: the summary (rows repeated from
// the full table), the full table, the notes, then the sections.
func Write(w io.Writer, command string, m Machine, summary, rows []Stamped, notes []string, sections ...Section) {
	fmt.Fprintf(w, "# Benchmarks\n\nProduced by `%s` on %s.\n\nMachine: %s.\n\n",
		command, time.Now().UTC().Format("2006-01-02 15:04 MST"), m.describe())
	fmt.Fprintln(w, "How to read it: docs/MEASUREMENTS.md. † marks a time, a rate or a ratio of times: a loaded machine moves it "+
		"(compare figures of one run, with the load average above); request counts, bytes and RSS are the robust figures. "+
		"A goal not met says why, or links the profile that does. Each row says when it was measured (UTC, with the "+
		"1-minute load average then) and the command that measures it again (after `make build plugins`).")
	if len(summary) > 0 {
		fmt.Fprint(w, "\n## Summary: cost in proportion to what changed, and the ceilings at 100,000 nodes\n\n")
		table(w, summary)
		fmt.Fprint(w, "\n## Every figure\n\n")
	} else {
		fmt.Fprintln(w)
	}
	table(w, rows)
	if len(notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range notes {
			fmt.Fprintf(w, "- %s\n", n)
		}
	}
	for _, s := range sections {
		if s.Title == "" { // already Markdown with its own headings
			fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(s.Body))
			continue
		}
		fmt.Fprintf(w, "\n## %s\n\n%s\n", s.Title, strings.TrimSpace(s.Body))
	}
}

func table(w io.Writer, rows []Stamped) {
	fmt.Fprintln(w, "| figure | fleet | value | goal | met | measured | command |\n|---|---|---|---|---|---|---|")
	for _, r := range rows {
		metric := r.Metric
		if LoadMoved(metric) {
			metric += " †"
		}
		command := ""
		if r.Command != "" {
			command = "`" + r.Command + "`"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", metric, r.Fleet, r.Value, r.Goal, r.Met, r.At, command)
	}
}

// LoadMoved says whether a figure is a time, a rate or a ratio of times,
// which other work on the machine moves, rather than a count.
func LoadMoved(metric string) bool {
	for _, w := range []string{" ms", "ms (", "per second", "CPU", "wall", "rate", "/ native", "Wasm /", "exponent"} {
		if strings.Contains(metric, w) {
			return true
		}
	}
	return false
}
