package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// base is a valid file without [placement]; each case adds its tables.
const base = `
[engine]
id = "e1"
[plugin]
path = "fake.wasm"
`

func TestOpsDefaults(t *testing.T) {
	c, err := Parse(good, dirWithPlugin(t))
	if err != nil {
		t.Fatal(err)
	}
	if c.Auth.Method != "noauth" || c.Auth.RefreshBefore.D() != 5*time.Minute || c.Server.Listen != "" ||
		c.Server.UnhealthyAfter != 3 || c.Server.History != 50 || c.Log.Level != "info" ||
		c.Engine.StopTimeout.D() != time.Minute {
		t.Fatalf("defaults: %+v %+v %+v stop %v", c.Auth, c.Server, c.Log, c.Engine.StopTimeout.D())
	}
}

func TestGoodOpsConfigs(t *testing.T) {
	dir := dirWithPlugin(t)
	os.WriteFile(filepath.Join(dir, "clouds.yaml"), []byte("clouds: {}\n"), 0o600)
	cases := map[string]string{
		"password": `
[auth]
method = "password"
auth_url = "https://keystone.example:5000/v3"
username = "rpengine"
password = "s"
project_name = "service"
interface = "internal"
refresh_before = "10m"
[plugin.services]
baremetal = "catalog"
ironic = "catalog:baremetal"
nova = "http://nova.example/v2.1"
[server]
listen = "127.0.0.1:9180"
unhealthy_after = 5
history = 100
[log]
level = "debug"
`,
		"appcred": `
[auth]
method = "application_credential"
auth_url = "https://keystone.example:5000/v3"
application_credential_id = "abc"
application_credential_secret = "s"
`,
		"cloud": `
[auth]
method = "cloud"
cloud = "prod"
clouds_file = "clouds.yaml"
`,
		"env": `
[auth]
method = "env"
region = "RegionTwo"
`,
	}
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := Parse(base+text, dir)
			if err != nil {
				t.Fatal(err)
			}
			if c.Auth.CloudsFile != "" && !filepath.IsAbs(c.Auth.CloudsFile) {
				t.Fatalf("clouds_file %q not resolved", c.Auth.CloudsFile)
			}
		})
	}
}

// Every new key's errors name the key.
func TestOpsConfigErrorsNameTheKey(t *testing.T) {
	placement := "[placement]\nendpoint = \"http://127.0.0.1:8778\"\n"
	cases := []struct{ name, text, want string }{
		{"no endpoint with noauth", "", `placement.endpoint: is required with auth.method = "noauth"`},
		{"endpoint not a URL", "[placement]\nendpoint = \"127.0.0.1:8778\"\n", `placement.endpoint: "127.0.0.1:8778" is not an http(s) URL`},
		{"unknown method", placement + "[auth]\nmethod = \"kerberos\"\n", `auth.method: "kerberos" is not one of noauth, password`},
		{"wrong type", placement + "[auth]\nmethod = 1\n", `line 9, key auth.method: incompatible types`},
		{"unknown auth key", placement + "[auth]\nmethod = \"noauth\"\nusername_ = \"x\"\n", "unknown key(s): auth.username_"},
		{"token with keystone", placement + "token = \"admin\"\n[auth]\nmethod = \"env\"\n", "placement.token: only with auth.method = \"noauth\""},
		{"password without fields", "[auth]\nmethod = \"password\"\n",
			"auth.auth_url: is required"},
		{"password without password", "[auth]\nmethod = \"password\"\nauth_url = \"http://k/v3\"\nusername = \"u\"\nproject_id = \"p\"\n",
			`auth.password: is required with auth.method = "password"`},
		{"password without project", "[auth]\nmethod = \"password\"\nauth_url = \"http://k/v3\"\nusername = \"u\"\npassword = \"p\"\n",
			"auth.project_name: (or auth.project_id) is required"},
		{"password without user", "[auth]\nmethod = \"password\"\nauth_url = \"http://k/v3\"\npassword = \"p\"\nproject_id = \"p\"\n",
			"auth.username: (or auth.user_id) is required"},
		{"auth_url not a URL", "[auth]\nmethod = \"password\"\nauth_url = \"keystone\"\nusername = \"u\"\npassword = \"p\"\nproject_id = \"p\"\n",
			`auth.auth_url: "keystone" is not an http(s) URL`},
		{"appcred without secret", "[auth]\nmethod = \"application_credential\"\nauth_url = \"http://k/v3\"\napplication_credential_id = \"i\"\n",
			"auth.application_credential_secret: is required"},
		{"appcred without id", "[auth]\nmethod = \"application_credential\"\nauth_url = \"http://k/v3\"\napplication_credential_secret = \"s\"\n",
			"auth.application_credential_id: (or auth.application_credential_name) is required"},
		{"appcred by name without user", "[auth]\nmethod = \"application_credential\"\nauth_url = \"http://k/v3\"\napplication_credential_name = \"n\"\napplication_credential_secret = \"s\"\n",
			"auth.username: (or auth.user_id) is required with auth.application_credential_name"},
		{"password key with appcred", "[auth]\nmethod = \"application_credential\"\nauth_url = \"http://k/v3\"\napplication_credential_id = \"i\"\napplication_credential_secret = \"s\"\npassword = \"p\"\n",
			`auth.password: not used with auth.method = "application_credential"`},
		{"cloud without name", "[auth]\nmethod = \"cloud\"\n", `auth.cloud: is required with auth.method = "cloud"`},
		{"missing clouds file", "[auth]\nmethod = \"cloud\"\ncloud = \"x\"\nclouds_file = \"nope.yaml\"\n", "auth.clouds_file: stat"},
		{"missing cacert", "[auth]\nmethod = \"env\"\ncacert = \"nope.pem\"\n", "auth.cacert: stat"},
		{"keys with noauth", placement + "[auth]\nmethod = \"noauth\"\nusername = \"u\"\n", `auth.username: not used with auth.method = "noauth"`},
		{"bad interface", "[auth]\nmethod = \"env\"\ninterface = \"private\"\n", `auth.interface: "private" is not one of public, internal, admin`},
		{"bad refresh", "[auth]\nmethod = \"env\"\nrefresh_before = \"soon\"\n", "key auth.refresh_before: bad duration"},
		{"zero refresh", "[auth]\nmethod = \"env\"\nrefresh_before = \"0s\"\n", "auth.refresh_before: must be positive"},
		{"zero auth timeout", "[auth]\nmethod = \"env\"\ntimeout = \"0s\"\n", "auth.timeout: must be positive"},
		{"catalog with noauth", placement + "[plugin.services]\nbaremetal = \"catalog\"\n", `plugin.services.baremetal: "catalog" needs Keystone`},
		{"catalog without type", "[auth]\nmethod = \"env\"\n[plugin.services]\nbaremetal = \"catalog:\"\n", `plugin.services.baremetal: "catalog:" names no service type`},
		{"service not a URL", placement + "[plugin.services]\nbaremetal = \"ironic:6385\"\n", `plugin.services.baremetal: "ironic:6385" is neither an http(s) URL`},
		{"service wrong type", placement + "[plugin.services]\nbaremetal = 6385\n", "plugin.services.baremetal"},
		{"bad listen", placement + "[server]\nlisten = \"9180\"\n", `server.listen: "9180" is not host:port`},
		{"unhealthy_after zero", placement + "[server]\nunhealthy_after = 0\n", "server.unhealthy_after: must be at least 1"},
		{"history zero", placement + "[server]\nhistory = 0\n", "server.history: must be in [1, 10000]"},
		{"unknown server key", placement + "[server]\nport = 9180\n", "unknown key(s): server.port"},
		{"bad log level", placement + "[log]\nlevel = \"verbose\"\n", `log.level: "verbose" is not one of debug, info, warn, error`},
		{"unknown log key", placement + "[log]\nfromat = \"json\"\n", "unknown key(s): log.fromat"},
		{"bad log format", placement + "[log]\nformat = \"syslog\"\n", "log.format: \"syslog\" is not one of text, json, oslo"},
		{"zero stop timeout", placement + "[engine]\nstop_timeout = \"0s\"\n", "engine.stop_timeout: must be positive"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// [engine] appears twice in one case; TOML forbids that, so
			// that case's [engine] keys go into base's table instead.
			text := base + c.text
			if extra, ok := strings.CutPrefix(c.text, placement+"[engine]\n"); ok {
				text = strings.Replace(base, `id = "e1"`, `id = "e1"`+"\n"+extra, 1) + placement
			}
			_, err := Parse(text, dirWithPlugin(t))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v\nwant it to contain %q", err, c.want)
			}
		})
	}
}
