package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGrantsShortAndTableForms(t *testing.T) {
	dir := dirWithPlugin(t)
	if err := os.WriteFile(filepath.Join(dir, "vc.pw"), []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(good, "[plugin.config]", `[plugin.services]
baremetal = "http://127.0.0.1:6385"
vcenter = { url = "http://127.0.0.1:8989", auth = "vcenter", user = "u", password_file = "vc.pw" }
mirror = { url = "http://127.0.0.1:9000", auth = "none" }
[plugin.config]`, 1)
	c, err := Parse(text, dir)
	if err != nil {
		t.Fatal(err)
	}
	if c.Plugin.Services["baremetal"] != "http://127.0.0.1:6385" || c.Plugin.Services["vcenter"] != "http://127.0.0.1:8989" {
		t.Fatalf("services %v", c.Plugin.Services)
	}
	vc := c.Plugin.Grants["vcenter"]
	if vc.Auth != "vcenter" || vc.User != "u" || vc.Password != "s3cret" {
		t.Fatalf("vcenter grant %+v", vc)
	}
	if c.Plugin.Grants["mirror"].Auth != "none" || c.Plugin.Grants["baremetal"].Auth != "" {
		t.Fatalf("grants %v", c.Plugin.Grants)
	}
	if strings.Contains(vc.String(), "s3cret") {
		t.Fatalf("String shows the password: %s", vc)
	}
}

func TestBadGrantsNameTheProblem(t *testing.T) {
	cases := []struct{ grant, want string }{
		{`{ url = "http://h", auth = "kerberos" }`, `plugin.services.x: auth "kerberos" is not one of`},
		{`{ url = "http://h", auth = "vcenter", password = "p" }`, `auth "vcenter" needs user`},
		{`{ url = "http://h", auth = "vcenter", user = "u" }`, `needs password or password_file`},
		{`{ url = "catalog", auth = "vcenter", user = "u", password = "p" }`, `needs an http(s) url`},
		{`{ url = "http://h", user = "u" }`, `only for auth = "vcenter"`},
		{`{ url = "http://h", auth = "keystone" }`, `needs Keystone`},
		{`{ url = "http://h", colour = "red" }`, `unknown key "colour"`},
		{`{ url = "http://h", auth = "vcenter", user = "u", password = "p", password_file = "f" }`, `exclusive`},
		{`{ url = "http://h", auth = "vcenter", user = "u", password_file = "missing" }`, `password_file`},
		{`42`, `want a URL or a table`},
	}
	for _, tc := range cases {
		text := strings.Replace(good, "[plugin.config]", "[plugin.services]\nx = "+tc.grant+"\n[plugin.config]", 1)
		_, err := Parse(text, dirWithPlugin(t))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.grant, err, tc.want)
		}
	}
}
