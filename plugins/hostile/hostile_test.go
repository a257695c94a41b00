package main

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/testing/guesttest"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// attack is one hostile plugin and what the host must make of it.
type attack struct {
	name string
	cfg  map[string]any
	opts wasmhost.Options
	kind wasmhost.Kind
	want string // in the error
	// after, if set, checks that the attack left no trace.
	after func(t *testing.T)
}

func attacks(t *testing.T) []attack {
	// A real socket on the host that the plugin must not reach.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	t.Setenv("OS_PASSWORD", "hunter2") // a credential in the engine's environment
	secret := filepath.Join(t.TempDir(), "clouds.yaml")
	os.WriteFile(secret, []byte("password: hunter2"), 0o600)
	planted := filepath.Join(t.TempDir(), "planted")
	short := wasmhost.Options{CallTimeout: 500 * time.Millisecond}
	small := wasmhost.Options{MemoryLimit: 64 << 20}
	return []attack{
		{"trap", nil, wasmhost.Options{}, wasmhost.KindTrap, "trapped: wasm error: out of bounds memory access", nil},
		{"panic", nil, wasmhost.Options{}, wasmhost.KindTrap, "panicked: hostile panic in list_nodes", nil},
		{"exit", nil, wasmhost.Options{}, wasmhost.KindTrap, "exited with code 7", nil},
		{"spin", nil, short, wasmhost.KindTimeout, "exceeded the time limit of 500ms (plugin.timeout)", nil},
		{"hog", nil, small, wasmhost.KindOutOfMemory, "out of memory (limit 64 MiB)", nil},
		{"huge", map[string]any{"mib": 8}, wasmhost.Options{MaxResponse: 4 << 20}, wasmhost.KindBadAnswer, "exceeds the 4194304-byte cap", nil},
		{"open", map[string]any{"target": secret}, wasmhost.Options{}, wasmhost.KindPlugin, "open " + secret + ": Bad file number", nil},
		{"write", map[string]any{"target": planted}, wasmhost.Options{}, wasmhost.KindPlugin, "Bad file number", func(t *testing.T) {
			if _, err := os.Stat(planted); err == nil {
				t.Fatal("the plugin wrote a file on the host")
			}
		}},
		{"list_dir", map[string]any{"target": "/"}, wasmhost.Options{}, wasmhost.KindPlugin, "open /: Bad file number", nil},
		{"dial", map[string]any{"target": ln.Addr().String()}, wasmhost.Options{}, wasmhost.KindPlugin, "connect: Connection refused", func(t *testing.T) {
			// A connection would already wait in the backlog.
			ln.(*net.TCPListener).SetDeadline(time.Now().Add(10 * time.Millisecond))
			if c, err := ln.Accept(); err == nil {
				c.Close()
				t.Fatal("the plugin reached a socket on the host")
			}
		}},
		{"service", map[string]any{"service": "identity", "path": "/v3/auth/tokens"},
			wasmhost.Options{Services: map[string]string{"baremetal": "http://127.0.0.1:1"}},
			wasmhost.KindPlugin, `service "identity" is not granted (granted in [plugin.services]: baremetal)`, nil},
		{"env", nil, wasmhost.Options{}, wasmhost.KindPlugin, "the environment holds nothing to steal", nil},
	}
}

// Every attack fails with an error naming the plugin, the operation and
// what went wrong; no answer of the failed call comes back; and the
// plugin serves the next call.
func TestEveryAttackIsContained(t *testing.T) {
	wasm := guesttest.Build(t, ".")
	for _, a := range attacks(t) {
		t.Run(a.name, func(t *testing.T) {
			cfg := map[string]any{"attack": a.name}
			for k, v := range a.cfg {
				cfg[k] = v
			}
			p := guesttest.WasmLoader(wasm, a.opts).OK(t, cfg)
			nodes, err := p.ListNodes(context.Background(), hostabi.ListNodesRequest{})
			checkContained(t, nodes, err, a.kind, "list_nodes", a.want)
			if a.after != nil {
				a.after(t)
			}
			if _, err := p.ListInstances(context.Background()); err != nil {
				t.Fatalf("the call after the attack: %v", err)
			}
		})
	}
}

// In-process isolation stops the same crashes (WithCloseOnContextDone).
func TestCrashesAreContainedInProcess(t *testing.T) {
	wasm := guesttest.Build(t, ".")
	for _, a := range attacks(t) {
		switch a.name {
		case "trap", "panic", "exit", "spin", "hog":
		default:
			continue
		}
		t.Run(a.name, func(t *testing.T) {
			a.opts.Isolation = wasmhost.InProcess
			p := guesttest.WasmLoader(wasm, a.opts).OK(t, map[string]any{"attack": a.name})
			nodes, err := p.ListNodes(context.Background(), hostabi.ListNodesRequest{})
			checkContained(t, nodes, err, a.kind, "list_nodes", a.want)
			if _, err := p.ListInstances(context.Background()); err != nil {
				t.Fatalf("the call after the attack: %v", err)
			}
		})
	}
}

// An attack in configure fails the load, naming the plugin's file.
func TestAttackWhileConfiguringFailsTheLoad(t *testing.T) {
	wasm := guesttest.Build(t, ".")
	for _, attack := range []string{"spin", "panic"} {
		t.Run(attack, func(t *testing.T) {
			var opts wasmhost.Options
			if attack == "spin" {
				opts.CallTimeout = 500 * time.Millisecond
			}
			_, err := guesttest.WasmLoader(wasm, opts)(t, map[string]any{"attack": attack, "in": "configure"})
			var e *wasmhost.Error
			if !errors.As(err, &e) || e.Plugin != wasm || e.Op != "start" {
				t.Fatalf("err = %#v, want an *Error naming %s and the start", err, wasm)
			}
			if !strings.Contains(e.Msg, map[string]string{"spin": "time limit", "panic": "hostile panic in configure"}[attack]) {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

func checkContained(t *testing.T, nodes []hostabi.Node, err error, kind wasmhost.Kind, op, want string) {
	t.Helper()
	if nodes != nil {
		t.Fatalf("a failed call returned %d nodes: %+v", len(nodes), nodes[0])
	}
	var e *wasmhost.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v (%T), want a *wasmhost.Error", err, err)
	}
	if e.Plugin != "hostile" || e.Op != op || e.Kind != kind || !strings.Contains(e.Error(), want) {
		t.Fatalf("err = %q (kind %s), want plugin hostile, op %s, kind %s, and %q in it", err, e.Kind, op, kind, want)
	}
	if !strings.HasPrefix(e.Error(), "plugin hostile: "+op+": ") {
		t.Fatalf("err = %q does not start with the plugin and operation", err)
	}
}
