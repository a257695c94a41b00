package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// [log] format and file reach every verb's logger; --log-format wins over
// the file's format; a file that cannot be opened falls back to stderr,
// saying so.
func TestLogFormatAndFileFromTheConfig(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "rpengine.log")
	cfg := filepath.Join(dir, "rpengine.toml")
	if err := os.WriteFile(cfg, []byte("[log]\nformat = \"oslo\"\nfile = \""+logPath+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	verbLogger(context.Background(), &stderr, args{config: cfg}).Info("cycle done", "engine", "e1", "updated", 3)
	b, _ := os.ReadFile(logPath)
	first := regexp.MustCompile(`^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}.\d{3} \d+ \S+ \S+ \[.*\]`)
	if !first.Match(b) || !strings.Contains(string(b), "INFO rpengine [- engine e1] cycle done updated=3") || stderr.Len() != 0 {
		t.Fatalf("log file %q, stderr %q", b, stderr.String())
	}
	verbLogger(context.Background(), &stderr, args{config: cfg, logFormat: "json"}).Info("as json")
	if b, _ = os.ReadFile(logPath); !strings.Contains(string(b), `"msg":"as json"`) {
		t.Fatalf("--log-format json did not win: %q", b)
	}
	if err := os.WriteFile(cfg, []byte("[log]\nfile = \""+filepath.Join(logPath, "x")+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	verbLogger(context.Background(), &stderr, args{config: cfg}).Info("to stderr")
	if !strings.Contains(stderr.String(), "log.file") || !strings.Contains(stderr.String(), "to stderr") {
		t.Fatalf("stderr %q", stderr.String())
	}
}
