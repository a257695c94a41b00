package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// healthcheck asks the listener the config names, on loopback for a
// wildcard address, and exits by the probe's answer.
func TestHealthcheckAsksTheDaemonsProbe(t *testing.T) {
	var ready atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc("GET /livez", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		w.Write([]byte("placement: refused\n"))
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go http.Serve(ln, mux)
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	cfg := filepath.Join(t.TempDir(), "rpengine.toml")
	text := "[placement]\nendpoint = \"http://127.0.0.1:1\"\n[server]\nlisten = \"0.0.0.0:" + port + "\"\n"
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	check := func(args ...string) (int, string) {
		var out, errs bytes.Buffer
		code := run(context.Background(), append([]string{"healthcheck", "--config", cfg}, args...), &out, &errs)
		return code, out.String() + errs.String()
	}
	if code, out := check(); code != 0 || !strings.Contains(out, "/livez: 200") {
		t.Fatalf("live: %d %q", code, out)
	}
	if code, out := check("ready"); code != 1 || !strings.Contains(out, "503 placement: refused") {
		t.Fatalf("not ready: %d %q", code, out)
	}
	ready.Store(true)
	if code, _ := check("ready"); code != 0 {
		t.Fatalf("ready: %d", code)
	}
	if code, out := check("sideways"); code != 2 || !strings.Contains(out, "live or ready") {
		t.Fatalf("bad operand: %d %q", code, out)
	}
	ln.Close()
	if code, out := check(); code != 1 || !strings.Contains(out, "connection refused") {
		t.Fatalf("no daemon: %d %q", code, out)
	}
}
