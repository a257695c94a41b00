package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestWatchFileAsksForAReloadWhenThePluginChanges(t *testing.T) {
	p := filepath.Join(t.TempDir(), "plugin.wasm")
	os.WriteFile(p, []byte("v1"), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reload := make(chan struct{}, 1)
	go watchFile(ctx, func() string { return p }, 10*time.Millisecond, reload, slog.New(slog.DiscardHandler))
	select {
	case <-reload:
		t.Fatal("reload before any change")
	case <-time.After(100 * time.Millisecond):
	}
	os.WriteFile(p, []byte("version 2"), 0o644)
	select {
	case <-reload:
	case <-time.After(10 * time.Second):
		t.Fatal("no reload after the plugin file changed")
	}
}
