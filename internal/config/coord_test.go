package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCoordDefaultsAndKeys(t *testing.T) {
	c, err := Parse(good, dirWithPlugin(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Coord.Etcd) != 0 || c.Coord.LeaseTTL.D() != 10*time.Second || c.Coord.Prefix != "/rpengine/" {
		t.Fatalf("defaults %+v", c.Coord)
	}
	c, err = Parse(good+"\n[coord]\netcd = [\"http://127.0.0.1:2379\"]\npartitions = 64\nlease_ttl = \"4s\"\n", dirWithPlugin(t))
	if err != nil {
		t.Fatal(err)
	}
	if c.Coord.Partitions != 64 || c.Coord.LeaseTTL.D() != 4*time.Second {
		t.Fatalf("coord %+v", c.Coord)
	}
}

func TestCoordChecks(t *testing.T) {
	for _, tc := range []struct{ toml, want string }{
		{"[coord]\npartitions = 8", "coord.etcd: is required"},
		{"[coord]\netcd = [\"127.0.0.1:2379\"]", "coord.etcd: \"127.0.0.1:2379\" is not"},
		{"[coord]\netcd = [\"http://e:2379\"]\npartitions = 8\nshards = [\"a\"]", "exclude each other"},
		{"[coord]\netcd = [\"http://e:2379\"]\npartitions = 5000", "coord.partitions: must be in 0..4096"},
		{"[coord]\netcd = [\"http://e:2379\"]\nlease_ttl = \"1500ms\"", "coord.lease_ttl: must be whole seconds"},
		{"[coord]\netcd = [\"http://e:2379\"]\nprefix = \"x\"", "coord.prefix: must start with /"},
		{"[scope]\nshards = [\"a\"]\n[coord]\netcd = [\"http://e:2379\"]\nshards = [\"a\"]", "replaces scope.shards"},
		{"[coord]\netcd = [\"http://e:2379\"]\nparts = 3", "unknown key(s): coord.parts"},
	} {
		_, err := Parse(strings.Replace(good, "[plugin]", tc.toml+"\n[plugin]", 1), dirWithPlugin(t))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.toml, err, tc.want)
		}
	}
}

// etcd's TLS and user keys: credentials in a URL are refused by name
// without being shown; a password goes only over TLS, read from its file.
func TestCoordAccessKeys(t *testing.T) {
	dir := dirWithPlugin(t)
	os.WriteFile(filepath.Join(dir, "etcd.pw"), []byte("EtcdPw1234\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "c.pem"), []byte("x"), 0o600)
	c, err := Parse(strings.Replace(good, "[plugin]", "[coord]\netcd = [\"https://e:2379\"]\nuser = \"rpengine\"\npassword_file = \"etcd.pw\"\n"+
		"ca_file = \"c.pem\"\ncert_file = \"c.pem\"\nkey_file = \"c.pem\"\n[plugin]", 1), dir)
	if err != nil {
		t.Fatal(err)
	}
	if c.Coord.EtcdPassword() != "EtcdPw1234" || c.Coord.CAFile != filepath.Join(dir, "c.pem") {
		t.Errorf("coord %+v, password %q", c.Coord, c.Coord.EtcdPassword())
	}
	for _, tc := range []struct{ toml, want string }{
		{"etcd = [\"http://root:EtcdS3cretPw@e:2379\"]", "holds credentials"},
		{"etcd = [\"http://e:2379\"]\nuser = \"u\"\npassword_file = \"etcd.pw\"", "coord.user: would send its password in clear"},
		{"etcd = [\"https://e:2379\"]\nuser = \"u\"", "coord.user: needs coord.password_file"},
		{"etcd = [\"https://e:2379\"]\ncert_file = \"c.pem\"", "coord.cert_file: and coord.key_file go together"},
		{"etcd = [\"https://e:2379\"]\nca_file = \"none.pem\"", "coord.ca_file: " + filepath.Join(dir, "none.pem") + " does not exist"},
		{"etcd = [\"http://e:2379\"]\nca_file = \"c.pem\"", "is plain http, but coord's TLS files are given"},
		{"user = \"u\"\npassword_file = \"etcd.pw\"", "coord.etcd: is required with"},
	} {
		_, err := Parse(strings.Replace(good, "[plugin]", "[coord]\n"+tc.toml+"\n[plugin]", 1), dir)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "S3cret") {
			t.Errorf("%q: got %v, want %q", tc.toml, err, tc.want)
		}
	}
}

// A config error that quotes a URL quotes it redacted.
func TestConfigErrorsQuoteURLsRedacted(t *testing.T) {
	for _, text := range []string{
		strings.Replace(good, `endpoint = "http://127.0.0.1:8778"`, `endpoint = "ftp://adm:PlcPw12345@h/?token=PlcTok12345"`, 1),
		good + "\n[plugin.services]\nvc = { url = \"ftp://u:SvcPw12345@vc/?token=SvcTok12345\", auth = \"vcenter\", user = \"u\", password = \"p\" }\n",
	} {
		_, err := Parse(text, dirWithPlugin(t))
		if err == nil || strings.Contains(err.Error(), "12345") || !strings.Contains(err.Error(), "xxxxx") {
			t.Errorf("%q: %v", text, err)
		}
	}
}
