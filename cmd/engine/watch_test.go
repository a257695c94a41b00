package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The plugin watch reloads on content, not on time stamps: each step is
// one check, as the ticker would make it, with no waiting.
func TestPluginWatchReloadsOnContentOnly(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "plugin.wasm")
	write := func(content string, at time.Time) {
		t.Helper()
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Unix(1_700_000_000, 0)
	write("build 1", t0)
	w := newPluginWatch(p)
	steps := []struct {
		name   string
		act    func()
		reload bool
	}{
		{"nothing happened", func() {}, false},
		{"same bytes rebuilt, newer time stamp", func() { write("build 1", t0.Add(time.Minute)) }, false},
		{"touched again", func() { write("build 1", t0.Add(2*time.Minute)) }, false},
		{"new content, same size and time stamp", func() { write("build 2", t0.Add(2*time.Minute)) }, false}, // not looked at: stat unchanged
		{"new content", func() { write("build 3", t0.Add(3*time.Minute)) }, true},
		{"checked again", func() {}, false},
		{"removed", func() { os.Remove(p) }, true},
		{"back with the same bytes as before removal", func() { write("build 3", t0.Add(4*time.Minute)) }, true},
	}
	for _, s := range steps {
		s.act()
		if got := w.changed(p); got != s.reload {
			t.Errorf("%s: reload %v, want %v", s.name, got, s.reload)
		}
	}
	// Another path (a reload moved the plugin) is a new baseline.
	q := filepath.Join(dir, "other.wasm")
	os.WriteFile(q, []byte("other"), 0o644)
	if w.changed(q) {
		t.Error("a new path counted as a change")
	}
}
