package config

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/rpengine/rpengine/internal/redact"
)

// Grant is one [plugin.services] entry. The short form is the endpoint
// alone (`baremetal = "https://..."` or `"catalog"`); the table form says
// how the host authenticates the plugin's calls to it:
//
//	vcenter = { url = "https://vc.example.com", auth = "vcenter", user = "svc", password_file = "/etc/rpengine/vc.pw" }
//	mirror  = { url = "https://mirror.example.com", auth = "none" }
//
// The plugin never sees any of it: it names the service, the host adds
// the credential (internal/wasmhost.Credential).
type Grant struct {
	URL  string `toml:"url"`
	Auth string `toml:"auth"` // "" (the Keystone token when [auth] has Keystone), "keystone", "none", "vcenter"
	// User and Password (or PasswordFile, read at load) log in to a
	// service with its own sessions (auth = "vcenter").
	User         string `toml:"user"`
	Password     string `toml:"password"`
	PasswordFile string `toml:"password_file"`
}

// GrantAuths are the values of a grant's auth key.
var GrantAuths = []string{"", "keystone", "none", "vcenter"}

// UnmarshalTOML takes the short (string) or the table form.
func (g *Grant) UnmarshalTOML(v any) error {
	switch t := v.(type) {
	case string:
		*g = Grant{URL: t}
		return nil
	case map[string]any:
		*g = Grant{}
		for k, val := range t {
			s, ok := val.(string)
			if !ok {
				return fmt.Errorf("key %s: want a string, got %T", k, val)
			}
			switch k {
			case "url":
				g.URL = s
			case "auth":
				g.Auth = s
			case "user":
				g.User = s
			case "password":
				g.Password = s
			case "password_file":
				g.PasswordFile = s
			default:
				return fmt.Errorf("unknown key %q (want url, auth, user, password, password_file)", k)
			}
		}
		return nil
	}
	return fmt.Errorf("want a URL or a table { url = ..., auth = ... }, got %T", v)
}

// String never shows the password.
func (g Grant) String() string {
	if g.Auth == "" {
		return redact.URL(g.URL)
	}
	return fmt.Sprintf("%s (auth %s)", redact.URL(g.URL), g.Auth)
}

// grantsToServices fills Plugin.Services (the endpoints every reader
// knows) from the grants, and reads password files.
func (c *Config) grantsToServices(dir func(string) string) error {
	if len(c.Plugin.Grants) == 0 {
		return nil
	}
	c.Plugin.Services = make(map[string]string, len(c.Plugin.Grants))
	for name, g := range c.Plugin.Grants {
		c.Plugin.Services[name] = g.URL
		if g.PasswordFile == "" {
			continue
		}
		if g.Password != "" {
			return fmt.Errorf("plugin.services.%s: password and password_file are exclusive", name)
		}
		g.PasswordFile = dir(g.PasswordFile)
		b, err := os.ReadFile(g.PasswordFile)
		if err != nil {
			return fmt.Errorf("plugin.services.%s.password_file: %w", name, err)
		}
		g.Password = strings.TrimRight(string(b), "\r\n")
		c.Plugin.Grants[name] = g
	}
	return nil
}

func (c *Config) checkGrants() []error {
	var errs []error
	for _, name := range sortedKeys(c.Plugin.Grants) {
		g, key := c.Plugin.Grants[name], "plugin.services."+name
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("%s: "+format, append([]any{key}, args...)...))
		}
		switch {
		case !slices.Contains(GrantAuths, g.Auth):
			bad("auth %q is not one of keystone, none, vcenter", g.Auth)
		case g.Auth == "keystone" && c.Auth.Method == "noauth":
			bad("auth \"keystone\" needs Keystone: set auth.method")
		case g.Auth == "vcenter" && g.User == "":
			bad("auth \"vcenter\" needs user")
		case g.Auth == "vcenter" && g.Password == "":
			bad("auth \"vcenter\" needs password or password_file")
		case g.Auth == "vcenter" && !httpURL(g.URL):
			bad("auth \"vcenter\" needs an http(s) url, not %q", redact.URL(g.URL))
		case g.Auth != "vcenter" && (g.User != "" || g.Password != "" || g.PasswordFile != ""):
			bad("user and password are only for auth = \"vcenter\"")
		}
	}
	return errs
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
