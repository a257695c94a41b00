package config

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/rpengine/rpengine/internal/ops"
	"github.com/rpengine/rpengine/internal/redact"
)

// Auth is [auth]: how the engine authenticates to the cloud. See README.md.
type Auth struct {
	Method     string `toml:"method"`
	Cloud      string `toml:"cloud"`
	CloudsFile string `toml:"clouds_file"`

	AuthURL  redact.Endpoint `toml:"auth_url"` // prints redacted; Raw() for the Keystone client
	Username string          `toml:"username"`
	UserID   string          `toml:"user_id"`
	Password string          `toml:"password"`
	// PasswordFile (and ApplicationCredentialSecretFile) hold the secret
	// instead, read at load; see secrets.go for $CREDENTIALS_DIRECTORY.
	PasswordFile      string `toml:"password_file"`
	UserDomainName    string `toml:"user_domain_name"`
	UserDomainID      string `toml:"user_domain_id"`
	ProjectName       string `toml:"project_name"`
	ProjectID         string `toml:"project_id"`
	ProjectDomainName string `toml:"project_domain_name"`
	ProjectDomainID   string `toml:"project_domain_id"`

	ApplicationCredentialID         string `toml:"application_credential_id"`
	ApplicationCredentialName       string `toml:"application_credential_name"`
	ApplicationCredentialSecret     string `toml:"application_credential_secret"`
	ApplicationCredentialSecretFile string `toml:"application_credential_secret_file"`

	Region        string   `toml:"region"`
	Interface     string   `toml:"interface"`
	CACert        string   `toml:"cacert"`
	RefreshBefore Duration `toml:"refresh_before"`
	Timeout       Duration `toml:"timeout"`
}

// Server is [server]: the daemon's HTTP endpoint for metrics, health and
// the status page.
type Server struct {
	Listen         string `toml:"listen"`
	UnhealthyAfter int    `toml:"unhealthy_after"`
	History        int    `toml:"history"`
	// MetricsListen, if set, serves /metrics alone on its own address;
	// WebConfigFile is a Prometheus web configuration file (TLS, basic
	// auth); AllowedHosts extends the Host allow-list (docs/SECURITY.md).
	MetricsListen string   `toml:"metrics_listen"`
	WebConfigFile string   `toml:"web_config_file"`
	AllowedHosts  []string `toml:"allowed_hosts"`
}

// Log is [log].
type Log struct {
	Level string `toml:"level"`
	// Format is text, json or oslo (oslo.log's line format, which
	// kolla's fluentd collects); --log-format overrides it.
	Format string `toml:"format"`
	// File is where records go instead of stderr, reopened on SIGHUP
	// (logrotate); "" is stderr.
	File string `toml:"file"`
}

var (
	authMethods = []string{"noauth", "password", "application_credential", "cloud", "env"}
	logLevels   = []string{"debug", "info", "warn", "error"}
	logFormats  = []string{"text", "json", "oslo"}
	interfaces  = []string{"", "public", "internal", "admin"}
)

// catalogRef is how a [plugin.services] value names a catalog service.
const catalogRef = "catalog"

func (c *Config) checkAuth() []error {
	a := c.Auth
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("auth.%s: "+format, append([]any{key}, args...)...))
	}
	if !slices.Contains(authMethods, a.Method) {
		bad("method", "%q is not one of %s", a.Method, strings.Join(authMethods, ", "))
		return errs
	}
	with := fmt.Sprintf("with auth.method = %q", a.Method)
	if c.Placement.Token != "" && a.Method != "noauth" {
		errs = append(errs, fmt.Errorf("placement.token: only with auth.method = \"noauth\" (Keystone issues the token)"))
	}
	set := a.fieldsSet()
	allowed := map[string][]string{
		"noauth":                 nil,
		"env":                    {"region", "interface", "cacert"},
		"cloud":                  {"cloud", "clouds_file", "region", "interface", "cacert"},
		"password":               {"auth_url", "username", "user_id", "password", "password_file", "user_domain_name", "user_domain_id", "project_name", "project_id", "project_domain_name", "project_domain_id", "region", "interface", "cacert"},
		"application_credential": {"auth_url", "username", "user_id", "user_domain_name", "user_domain_id", "application_credential_id", "application_credential_name", "application_credential_secret", "application_credential_secret_file", "region", "interface", "cacert"},
	}[a.Method]
	for _, k := range set {
		if !slices.Contains(allowed, k) {
			bad(k, "not used %s", with)
		}
	}
	a.checkRequired(bad, with)
	if !a.AuthURL.IsZero() && !httpURL(a.AuthURL.Raw()) {
		bad("auth_url", "%q is not an http(s) URL", a.AuthURL)
	}
	if !slices.Contains(interfaces, a.Interface) {
		bad("interface", "%q is not one of public, internal, admin", a.Interface)
	}
	for key, p := range map[string]string{"clouds_file": a.CloudsFile, "cacert": a.CACert} {
		if p != "" {
			if _, err := os.Stat(p); err != nil {
				bad(key, "%v", err)
			}
		}
	}
	if a.RefreshBefore <= 0 {
		bad("refresh_before", "must be positive")
	}
	if a.Timeout <= 0 {
		bad("timeout", "must be positive")
	}
	return errs
}

// checkRequired reports, through bad, the keys a.Method needs that are
// missing.
func (a Auth) checkRequired(bad func(key, format string, args ...any), with string) {
	switch a.Method {
	case "cloud":
		if a.Cloud == "" {
			bad("cloud", "is required %s", with)
		}
	case "password":
		if a.AuthURL.IsZero() {
			bad("auth_url", "is required %s", with)
		}
		if a.Username == "" && a.UserID == "" {
			bad("username", "(or auth.user_id) is required %s", with)
		}
		if a.Password == "" {
			bad("password", "is required %s", with)
		}
		if a.ProjectName == "" && a.ProjectID == "" {
			bad("project_name", "(or auth.project_id) is required %s", with)
		}
	case "application_credential":
		if a.AuthURL.IsZero() {
			bad("auth_url", "is required %s", with)
		}
		if a.ApplicationCredentialSecret == "" {
			bad("application_credential_secret", "is required %s", with)
		}
		switch {
		case a.ApplicationCredentialID == "" && a.ApplicationCredentialName == "":
			bad("application_credential_id", "(or auth.application_credential_name) is required %s", with)
		case a.ApplicationCredentialID == "" && a.Username == "" && a.UserID == "":
			bad("username", "(or auth.user_id) is required with auth.application_credential_name")
		}
	}
}

// fieldsSet lists the method-specific keys given a value.
func (a Auth) fieldsSet() []string {
	m := map[string]string{
		"cloud": a.Cloud, "clouds_file": a.CloudsFile, "auth_url": a.AuthURL.Raw(), "username": a.Username,
		"user_id": a.UserID, "password": a.Password, "password_file": a.PasswordFile, "user_domain_name": a.UserDomainName,
		"user_domain_id": a.UserDomainID, "project_name": a.ProjectName, "project_id": a.ProjectID,
		"project_domain_name": a.ProjectDomainName, "project_domain_id": a.ProjectDomainID,
		"application_credential_id": a.ApplicationCredentialID, "application_credential_name": a.ApplicationCredentialName,
		"application_credential_secret":      a.ApplicationCredentialSecret,
		"application_credential_secret_file": a.ApplicationCredentialSecretFile, "region": a.Region,
		"interface": a.Interface, "cacert": a.CACert,
	}
	var out []string
	for k, v := range m {
		if v != "" {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func (c *Config) checkOps() []error {
	var errs []error
	req := func(ok bool, key, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf("%s: "+format, append([]any{key}, args...)...))
		}
	}
	if !c.Placement.Endpoint.IsZero() {
		req(httpURL(c.Placement.Endpoint.Raw()), "placement.endpoint", "%q is not an http(s) URL", c.Placement.Endpoint)
	}
	names := make([]string, 0, len(c.Plugin.Services))
	for name := range c.Plugin.Services {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		v, key := c.Plugin.Services[name], "plugin.services."+name
		if v == catalogRef || strings.HasPrefix(v, catalogRef+":") {
			req(c.Auth.Method != "noauth", key, "%q needs Keystone: set auth.method", v)
			req(v != catalogRef+":", key, "%q names no service type", v)
			continue
		}
		req(httpURL(v), key, "%q is neither an http(s) URL nor \"catalog\" or \"catalog:<service type>\"", redact.URL(v))
	}
	if c.Server.Listen != "" {
		_, _, err := net.SplitHostPort(c.Server.Listen)
		req(err == nil, "server.listen", "%q is not host:port (e.g. \"127.0.0.1:9180\")", c.Server.Listen)
	}
	if c.Server.MetricsListen != "" {
		_, _, err := net.SplitHostPort(c.Server.MetricsListen)
		req(err == nil, "server.metrics_listen", "%q is not host:port (e.g. \"0.0.0.0:9181\")", c.Server.MetricsListen)
		req(c.Server.Listen != "", "server.metrics_listen", "needs server.listen (the status page and probes)")
	}
	if c.Server.WebConfigFile != "" {
		// What the start refuses (ops.WebSecurity): a broken file, or one
		// without TLS.
		_, err := ops.WebSecurity(c.Server.WebConfigFile)
		req(err == nil, "server.web_config_file", "%v", strings.TrimPrefix(fmt.Sprint(err), "server.web_config_file "))
	}
	req(c.Server.UnhealthyAfter >= 1, "server.unhealthy_after", "must be at least 1")
	req(c.Server.History >= 1 && c.Server.History <= 10000, "server.history", "must be in [1, 10000]")
	req(slices.Contains(logLevels, c.Log.Level), "log.level", "%q is not one of %s", c.Log.Level, strings.Join(logLevels, ", "))
	req(slices.Contains(logFormats, c.Log.Format), "log.format", "%q is not one of %s", c.Log.Format, strings.Join(logFormats, ", "))
	return errs
}

func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
