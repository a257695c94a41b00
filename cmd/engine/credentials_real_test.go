package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/auth"
	"github.com/rpengine/rpengine/internal/config"
	"github.com/rpengine/rpengine/internal/testing/keystonetest"
)

// Against Debian's real Keystone: the password comes from a systemd
// credential ($CREDENTIALS_DIRECTORY/keystone-password, no password key
// in the config) and logs in; a wrong one in auth.password_file is
// refused without the file's content in the error.
func TestRealKeystoneWithPasswordFiles(t *testing.T) {
	k := keystonetest.StartReal(t)
	dir, creds := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(dir, "fake.wasm"), []byte("x"), 0o600)
	os.WriteFile(filepath.Join(creds, "keystone-password"), []byte(keystonetest.Password+"\n"), 0o400)
	os.WriteFile(filepath.Join(dir, "wrong"), []byte("Wr0ngPassw0rd"), 0o600)
	text := "[placement]\nendpoint = \"http://127.0.0.1:1\"\n[plugin]\npath = \"fake.wasm\"\n[auth]\nmethod = \"password\"\n" +
		"auth_url = \"" + k.AuthURL() + "\"\nusername = \"" + keystonetest.User + "\"\nuser_domain_id = \"default\"\nproject_name = \"" + keystonetest.Project + "\"\n"
	path := filepath.Join(dir, "c.toml")
	os.WriteFile(path, []byte(text), 0o600)
	t.Setenv("CREDENTIALS_DIRECTORY", creds)
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := auth.Open(context.Background(), authConfig(cfg.Auth))
	if err != nil {
		t.Fatalf("login with the systemd credential: %v", err)
	}
	if s.Provider().Token() == "" {
		t.Fatal("no token")
	}
	os.WriteFile(path, []byte(text+"password_file = \"wrong\"\n"), 0o600)
	if cfg, err = config.Load(path); err != nil {
		t.Fatal(err)
	}
	_, err = auth.Open(context.Background(), authConfig(cfg.Auth))
	if err == nil || !strings.Contains(err.Error(), "credentials refused (401)") || strings.Contains(err.Error(), "Wr0ngPassw0rd") {
		t.Fatalf("a wrong password file: %v", err)
	}
}
