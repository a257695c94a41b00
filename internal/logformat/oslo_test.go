package logformat

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// kollaFirstLine is the first-line pattern kolla-ansible's fluentd splits
// oslo logs on (ansible/roles/fluentd/templates/conf/input/00-global.conf.j2).
var kollaFirstLine = regexp.MustCompile(`^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}.\d{3} \d+ \S+ \S+ \[.*\]`)

// Every record, errors and multi-line values included, starts exactly
// one line the pattern matches, and its continuation lines match none.
func TestOsloRecordsSplitAsKollaReadsThem(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(NewOslo(&buf, slog.LevelDebug, "rpengine")).With("engine", "rack 1")
	const n = 1000
	for i := range n {
		switch i % 5 {
		case 0:
			log.Info("cycle done", "updated", i, "duration_ms", 12)
		case 1:
			log.Error("write failed", "err", errors.New("409 Conflict:\n{\"errors\": [\n  {\"code\": \"placement.concurrent_update\"}]}"),
				"request_id", fmt.Sprintf("req-%08d", i))
		case 2:
			log.Warn("plugin said\nsomething on\nthree lines", "node", "n-1")
		case 3:
			log.WithGroup("nova").Debug("hold placed", "class", "CUSTOM_GOLD", "empty", "")
		case 4:
			log.Info("2026-12-04 23:00:44.123 1 INFO x [y] a value that looks like a record", "v", "\n2026-12-04 23:00:44.123 1 INFO x [y]")
		}
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	starts := 0
	for _, l := range lines {
		if kollaFirstLine.MatchString(l) {
			starts++
		} else if !strings.HasPrefix(l, "    ") {
			t.Fatalf("a line neither starts a record nor continues one: %q", l)
		}
	}
	if starts != n || len(lines) <= n {
		t.Fatalf("%d records made %d first lines in %d lines", n, starts, len(lines))
	}
	first := lines[0]
	if !strings.Contains(first, " INFO rpengine [- engine rack_1] cycle done updated=0 duration_ms=12") {
		t.Fatalf("first line %q", first)
	}
	if !strings.Contains(buf.String(), "ERROR rpengine [req-00000001 engine rack_1] write failed err=\"409 Conflict:\\n{") ||
		!strings.Contains(buf.String(), "DEBUG rpengine [- engine rack_1] hold placed nova.class=CUSTOM_GOLD nova.empty=\"\"") {
		t.Fatalf("records:\n%s", buf.String()[:600])
	}
}

// After logrotate moves the file, a reopen sends what follows to a new
// file at the same path; nothing is lost.
func TestFileReopens(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rpengine.log")
	f, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(NewOslo(f, nil, "rpengine"))
	log.Info("before")
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	log.Info("between") // still to the moved file, as logrotate expects
	if err := f.Reopen(); err != nil {
		t.Fatal(err)
	}
	log.Info("after")
	old, _ := os.ReadFile(path + ".1")
	now, _ := os.ReadFile(path)
	if !strings.Contains(string(old), "before") || !strings.Contains(string(old), "between") || !strings.Contains(string(now), "after") ||
		strings.Contains(string(now), "before") {
		t.Fatalf("rotated %q, new %q", old, now)
	}
	if _, err := OpenFile(filepath.Join(path, "no", "such")); err == nil || !strings.Contains(err.Error(), "log.file") {
		t.Fatalf("a file that cannot be opened: %v", err)
	}
}
