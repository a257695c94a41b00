package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// Every record of every verb that reads a config names the engine, once:
// once (and once --node), plan and the daemon.
func TestEveryVerbLogsTheEngineID(t *testing.T) {
	fake := placementfake.New()
	t.Cleanup(fake.Close)
	path := daemonConfig(t, t.TempDir(), fmt.Sprintf("[placement]\nendpoint = %q\ntoken = \"admin\"\n", fake.URL()), "")
	check := func(what, logs string) int {
		t.Helper()
		n := 0
		for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
			if !strings.HasPrefix(line, "{") {
				continue
			}
			var rec map[string]any
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatalf("%s: %v: %s", what, err, line)
			}
			if rec["engine"] != "daemon" || strings.Count(line, `"engine":`) != 1 {
				t.Errorf("%s: record without the engine id once: %s", what, line)
			}
			n++
		}
		return n
	}
	for _, argv := range [][]string{{"once"}, {"plan"}, {"once", "--node", "node-00001"}} {
		var out, errb bytes.Buffer
		run(context.Background(), append(argv, "--config", path, "--log-format", "json"), &out, &errb)
		if n := check(strings.Join(argv, " "), errb.String()); n == 0 && argv[0] == "once" {
			t.Errorf("%v logged nothing:\n%s", argv, errb.String())
		}
	}
	d := startDaemon(t, path)
	d.waitFor("a cycle", func() bool { return strings.Contains(d.logs.String(), `"msg":"cycle"`) })
	d.stop()
	if n := check("run", d.logs.String()); n < 3 {
		t.Errorf("run: %d records", n)
	}
}

// Logs go to the journal with priorities only when stderr is the stream
// JOURNAL_STREAM names (device:inode), as systemd.exec(5) says to check.
func TestJournalStreamDetection(t *testing.T) {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(os.Stderr.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	t.Setenv("JOURNAL_STREAM", fmt.Sprintf("%d:%d", st.Dev, st.Ino))
	if !toJournal(os.Stderr) {
		t.Error("stderr is the stream JOURNAL_STREAM names, yet not detected")
	}
	if toJournal(&bytes.Buffer{}) || toJournal(os.Stdout) && !sameFile(os.Stdout, os.Stderr) {
		t.Error("another writer taken for the journal")
	}
	t.Setenv("JOURNAL_STREAM", fmt.Sprintf("%d:%d", st.Dev, st.Ino+1))
	if toJournal(os.Stderr) {
		t.Error("another inode taken for stderr's")
	}
	t.Setenv("JOURNAL_STREAM", "")
	if toJournal(os.Stderr) {
		t.Error("no JOURNAL_STREAM, yet the journal")
	}
}

func sameFile(a, b *os.File) bool {
	x, _ := a.Stat()
	y, _ := b.Stat()
	return x != nil && y != nil && os.SameFile(x, y)
}

// A verb that parses its own arguments (reown, plugin test) names its
// config among them; the engine id is read from there.
func TestConfigOfRawVerbs(t *testing.T) {
	for _, c := range []struct {
		a    args
		want string
	}{
		{args{config: "a.toml"}, "a.toml"},
		{args{rest: []string{"test", "--config", "b.toml", "x.wasm"}}, "b.toml"},
		{args{rest: []string{"-config=c.toml", "CUSTOM_GPU"}}, "c.toml"},
		{args{rest: []string{"inspect", "x.wasm"}}, ""},
		{args{rest: []string{"--config"}}, ""},
	} {
		if got := configOf(c.a); got != c.want {
			t.Errorf("configOf(%+v) = %q, want %q", c.a, got, c.want)
		}
	}
}
