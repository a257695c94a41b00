package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/guesttest"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

func TestPluginInspect(t *testing.T) {
	// Keep the compiled code out of the user's cache, but warm across runs.
	t.Setenv("XDG_CACHE_HOME", filepath.Join(os.TempDir(), "rpengine-test-xdg-cache"))
	wasm := guesttest.Build(t, "../../plugins/fake")
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"plugin", "inspect", wasm}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	wb, _ := os.ReadFile(wasm)
	sum := sha256.Sum256(wb)
	for _, want := range []string{"abi version:   1\n", "name:          fake\n", "version:       1\n",
		"sha256:        " + hex.EncodeToString(sum[:]) + "\n",
		"capabilities:  confirm_deleted\n",
		"host imports:  rpengine.http_request, rpengine.http_response_read"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}

	out.Reset()
	if code := run(context.Background(), []string{"plugin", "inspect", "--json", wasm}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var info wasmhost.Info
	if err := json.Unmarshal(out.Bytes(), &info); err != nil || info.Name != "fake" || info.ABIVersion != 1 {
		t.Fatalf("json %s: %+v %v", out.String(), info, err)
	}
}

func TestPluginInspectErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.wasm")
	os.WriteFile(bad, []byte("not wasm"), 0o644)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"plugin"}, 2, "usage: engine plugin inspect"},
		{[]string{"plugin", "inspect"}, 2, "usage: engine plugin inspect"},
		{[]string{"plugin", "inspect", bad}, 1, "plugin " + bad + ": load: not a valid Wasm module"},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		code := run(context.Background(), c.args, &out, &errb)
		if code != c.code || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, errb.String(), c.code, c.want)
		}
	}
}
