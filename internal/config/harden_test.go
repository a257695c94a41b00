package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/engine/placement"
)

func TestPlacementBounds(t *testing.T) {
	dir := dirWithPlugin(t)
	c, err := Parse(good, dir)
	if err != nil {
		t.Fatal(err)
	}
	if c.Placement.MaxResponse != placement.DefaultMaxResponse || c.Placement.MaxProviders != placement.DefaultMaxProviders {
		t.Fatalf("defaults %+v", c.Placement)
	}
	set := strings.Replace(good, "token = \"admin\"", "token = \"admin\"\nmax_response = \"1GiB\"\nmax_providers = 500000", 1)
	if c, err = Parse(set, dir); err != nil || c.Placement.MaxResponse != 1<<30 || c.Placement.MaxProviders != 500000 {
		t.Fatalf("%v %+v", err, c)
	}
	bad := strings.Replace(good, "token = \"admin\"", "token = \"admin\"\nmax_response = \"1KiB\"\nmax_providers = 0", 1)
	_, err = Parse(bad, dir)
	if err == nil || !strings.Contains(err.Error(), "placement.max_response: must be at least 1MiB") ||
		!strings.Contains(err.Error(), "placement.max_providers: must be at least 1") {
		t.Fatalf("%v", err)
	}
}

const keystone = `
[placement]
endpoint = "http://127.0.0.1:8778"
[plugin]
path = "fake.wasm"
[auth]
method = "password"
auth_url = "http://127.0.0.1:5000/v3"
username = "rpengine"
project_name = "service"
`

func write(t *testing.T, path, text string, mode os.FileMode) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, mode) // past the umask
	return path
}

func TestKeystoneSecretsFromFiles(t *testing.T) {
	dir := dirWithPlugin(t)
	creds := t.TempDir()
	write(t, filepath.Join(dir, "pw"), "from-file\n", 0o600)
	write(t, filepath.Join(creds, "keystone-password"), "from-systemd\n", 0o600)
	write(t, filepath.Join(creds, "other"), "named-in-systemd", 0o600)
	t.Setenv("CREDENTIALS_DIRECTORY", "")
	for _, c := range []struct {
		name, extra, credsDir, want, err string
	}{
		{"password_file", `password_file = "pw"`, "", "from-file", ""},
		{"systemd default name", ``, creds, "from-systemd", ""},
		{"systemd named", `password_file = "$CREDENTIALS_DIRECTORY/other"`, creds, "named-in-systemd", ""},
		{"inline wins over the systemd default", `password = "inline"`, creds, "inline", ""},
		{"both", "password = \"x\"\npassword_file = \"pw\"", "", "", "auth.password and auth.password_file are exclusive"},
		{"missing file", `password_file = "nope"`, "", "", "auth.password_file: open"},
		{"none at all", ``, "", "", "auth.password: is required"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("CREDENTIALS_DIRECTORY", c.credsDir)
			path := write(t, filepath.Join(dir, "c.toml"), keystone+c.extra+"\n", 0o600)
			cfg, err := Load(path)
			switch {
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Fatalf("err %v, want %q", err, c.err)
			case c.err == "" && err != nil:
				t.Fatal(err)
			case c.err == "" && cfg.Auth.Password != c.want:
				t.Fatalf("password %q, want %q", cfg.Auth.Password, c.want)
			}
		})
	}
}

// A file holding a secret that every user can read gets a warning naming
// it; the same file at 0600, or a config with no secret, gets none.
func TestWarnsOfReadableSecrets(t *testing.T) {
	dir := dirWithPlugin(t)
	t.Setenv("CREDENTIALS_DIRECTORY", "")
	inline := write(t, filepath.Join(dir, "inline.toml"), keystone+"password = \"pw\"\n", 0o644)
	cfg, err := Load(inline)
	if err != nil {
		t.Fatal(err)
	}
	if w := cfg.Warnings(); len(w) != 1 || !strings.Contains(w[0], inline+" holds a credential and is readable by every user (mode -rw-r--r--)") {
		t.Fatalf("warnings %q", w)
	}
	os.Chmod(inline, 0o600)
	if cfg, _ = Load(inline); len(cfg.Warnings()) != 0 {
		t.Fatalf("0600: warnings %q", cfg.Warnings())
	}
	pw := write(t, filepath.Join(dir, "pw"), "secret", 0o644)
	viaFile := write(t, filepath.Join(dir, "file.toml"), keystone+"password_file = \"pw\"\n", 0o644)
	if cfg, _ = Load(viaFile); len(cfg.Warnings()) != 1 || !strings.Contains(cfg.Warnings()[0], pw) {
		t.Fatalf("password file: warnings %q", cfg.Warnings())
	}
	plain := write(t, filepath.Join(dir, "plain.toml"), good, 0o644)
	if cfg, _ = Load(plain); len(cfg.Warnings()) != 0 {
		t.Fatalf("no secret: warnings %q", cfg.Warnings())
	}
}

// etcd's password file and client key, readable by every user, are
// named in a warning each.
func TestWarnsOfReadableEtcdSecrets(t *testing.T) {
	dir := dirWithPlugin(t)
	t.Setenv("CREDENTIALS_DIRECTORY", "")
	pw := write(t, filepath.Join(dir, "etcd.pw"), "EtcdPw1234", 0o644)
	key := write(t, filepath.Join(dir, "etcd.key"), "k", 0o644)
	write(t, filepath.Join(dir, "etcd.crt"), "c", 0o644)
	cfgPath := write(t, filepath.Join(dir, "etcd.toml"), strings.Replace(good, "[plugin]",
		"[coord]\netcd = [\"https://e:2379\"]\nuser = \"u\"\npassword_file = \"etcd.pw\"\ncert_file = \"etcd.crt\"\nkey_file = \"etcd.key\"\n[plugin]", 1), 0o600)
	cfg, err := Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(cfg.Warnings(), "\n"); len(cfg.Warnings()) != 2 || !strings.Contains(w, pw) || !strings.Contains(w, key) {
		t.Fatalf("warnings %q", cfg.Warnings())
	}
}

// The bus's password file, readable by every user, is named in a
// warning; at 0600 it is not.
func TestWarnsOfReadableEventsPassword(t *testing.T) {
	dir := dirWithPlugin(t)
	t.Setenv("CREDENTIALS_DIRECTORY", "")
	pw := write(t, filepath.Join(dir, "rabbit.pw"), "guest\n", 0o644)
	cfgPath := write(t, filepath.Join(dir, "ev.toml"), good+"\n[events]\ntransport_url = \"rabbit://guest@127.0.0.1:5672/\"\npassword_file = \"rabbit.pw\"\n", 0o600)
	cfg, err := Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if w := cfg.Warnings(); len(w) != 1 || !strings.Contains(w[0], pw) {
		t.Fatalf("warnings %q, want one naming %s", w, pw)
	}
	os.Chmod(pw, 0o600)
	if cfg, _ = Load(cfgPath); len(cfg.Warnings()) != 0 {
		t.Fatalf("0600: warnings %q", cfg.Warnings())
	}
}
