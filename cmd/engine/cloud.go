package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"time"

	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/internal/auth"
	"github.com/rpengine/rpengine/internal/config"
	"github.com/rpengine/rpengine/internal/vcsession"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// cloud is one config's identity and the endpoints it resolved: Placement
// and the plugin's services, from the config or the service catalog.
type cloud struct {
	sess      *auth.Session
	placement string
	services  map[string]string
	// pluginHTTP, if set, wraps the transport of the plugin's requests
	// (the daemon times them by service).
	pluginHTTP func(services map[string]string, next http.RoundTripper) http.RoundTripper
	// microversion was negotiated by an earlier process (state file).
	microversion string
	creds        map[string]wasmhost.Credential
}

// openCloud authenticates as [auth] says and resolves the endpoints; log
// (may be nil) gets the session's warnings.
func openCloud(ctx context.Context, cfg *config.Config, log *slog.Logger) (*cloud, error) {
	ac := authConfig(cfg.Auth)
	ac.Logger = log
	sess, err := auth.Open(ctx, ac)
	if err != nil {
		return nil, err
	}
	c := &cloud{sess: sess, placement: cfg.Placement.Endpoint.Raw()}
	if c.placement == "" && !cfg.PluginOnly() {
		if c.placement, err = sess.Endpoint("placement"); err != nil {
			return nil, err
		}
	}
	if c.services, err = sess.Services(cfg.Plugin.Services); err != nil {
		return nil, err
	}
	if c.creds, err = credentials(cfg, sess, c.services); err != nil {
		return nil, err
	}
	return c, nil
}

// credentials are what the host adds to the plugin's calls, per granted
// service: the Keystone token unless the grant says otherwise, a vCenter
// session for auth = "vcenter", nothing for auth = "none". A new kind of
// service is one more case here and one Credential.
func credentials(cfg *config.Config, sess *auth.Session, endpoints map[string]string) (map[string]wasmhost.Credential, error) {
	out := make(map[string]wasmhost.Credential, len(endpoints))
	for name := range endpoints {
		g := cfg.Plugin.Grants[name]
		switch g.Auth {
		case "", "keystone":
			if kc := sess.Credential(); kc != nil {
				out[name] = kc
			} else {
				out[name] = nil
			}
		case "none":
			out[name] = nil
		case "vcenter":
			s, err := vcsession.New(endpoints[name], g.User, g.Password, serviceTransport(sess))
			if err != nil {
				return nil, fmt.Errorf("plugin.services.%s: %w", name, err)
			}
			out[name] = s
		default:
			return nil, fmt.Errorf("plugin.services.%s: auth %q is not supported", name, g.Auth)
		}
	}
	return out, nil
}

// close ends the sessions the host opened for the plugin (vCenter's
// logout); Keystone tokens simply expire.
func (c *cloud) close(ctx context.Context) {
	if c == nil {
		return
	}
	for _, cr := range c.creds {
		if s, ok := cr.(interface{ Close(context.Context) error }); ok {
			ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			_ = s.Close(ctx)
			cancel()
		}
	}
}

// serviceTransport carries the host's own calls to the plugin's services
// (logins), trusting [auth]'s CA like the plugin's calls.
func serviceTransport(sess *auth.Session) http.RoundTripper {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if t := sess.TLS(); t != nil {
		tr.TLSClientConfig = t
	}
	return tr
}

func authConfig(a config.Auth) auth.Config {
	return auth.Config{
		Method:                      auth.Method(a.Method),
		Cloud:                       a.Cloud,
		CloudsFile:                  a.CloudsFile,
		AuthURL:                     a.AuthURL.Raw(),
		Username:                    a.Username,
		UserID:                      a.UserID,
		Password:                    a.Password,
		UserDomainName:              a.UserDomainName,
		UserDomainID:                a.UserDomainID,
		ProjectName:                 a.ProjectName,
		ProjectID:                   a.ProjectID,
		ProjectDomainName:           a.ProjectDomainName,
		ProjectDomainID:             a.ProjectDomainID,
		ApplicationCredentialID:     a.ApplicationCredentialID,
		ApplicationCredentialName:   a.ApplicationCredentialName,
		ApplicationCredentialSecret: a.ApplicationCredentialSecret,
		Region:                      a.Region,
		Interface:                   a.Interface,
		CACert:                      a.CACert,
		RefreshBefore:               a.RefreshBefore.D(),
		Timeout:                     a.Timeout.D(),
	}
}

// placementHooks are the daemon's observers; nil for one-shot verbs.
type placementHooks struct {
	observe func(method string, status int, d time.Duration)
	log     *slog.Logger
}

// connect negotiates with Placement as this identity.
func (c *cloud) connect(ctx context.Context, cfg *config.Config, h *placementHooks) (*placement.Client, error) {
	pcfg := placement.Config{
		Endpoint: c.placement,
		Token:    cfg.Placement.Token,
		Provider: c.sess.Provider(),
		TLS:      c.sess.TLS(),
		Timeout:  cfg.Placement.Timeout.D(),
		MaxConns: cfg.Placement.Connections,
		// From the state file: a new process skips the discovery request.
		Microversion: c.microversion,
		MaxResponse:  int64(min(uint64(cfg.Placement.MaxResponse), 1<<62)),
		MaxProviders: cfg.Placement.MaxProviders,
	}
	if h != nil {
		pcfg.Observe, pcfg.Logger = h.observe, h.log
	}
	return placement.New(ctx, pcfg)
}

// pluginOptions are wasmhost.Options for cfg: the resolved services, the
// token added by the host, and the CA if [auth] names one.
func (c *cloud) pluginOptions(cfg *config.Config, log *slog.Logger) wasmhost.Options {
	cache := cfg.Plugin.CacheDir
	if cache == "" {
		cache = pluginCacheDir()
	}
	o := wasmhost.Options{
		MemoryLimit: uint64(cfg.Plugin.MemoryLimit),
		CallTimeout: cfg.Plugin.Timeout.D(),
		CacheDir:    cache,
		Clock:       cfg.Plugin.Clock,
		MaxResponse: uint32(min(uint64(cfg.Plugin.MaxResponse), 1<<32-1)),
		Services:    c.services,
		Credentials: c.creds,
		SHA256:      cfg.Plugin.SHA256,
		Logger:      log,
	}
	o.MaxHTTPResponse = int64(cfg.Plugin.MaxHTTPResponse)
	o.Limits = wasmhost.Limits{MaxRecords: cfg.Plugin.MaxRecords, MaxField: cfg.Plugin.MaxFieldLength, MaxTraits: cfg.Plugin.MaxTraits}
	o.NodeFields = cfg.AggregateRules().Fields() // what the aggregate rules match on, only
	if t := c.sess.TLS(); t != nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = t
		o.HTTPClient = &http.Client{Transport: tr}
	}
	if c.pluginHTTP != nil {
		var next http.RoundTripper = http.DefaultTransport
		if o.HTTPClient != nil {
			next = o.HTTPClient.Transport
		}
		o.HTTPClient = &http.Client{Transport: c.pluginHTTP(c.services, next)}
	}
	return o
}

// stateKey names the Placement and engine a state file belongs to; with
// the catalog, the endpoint is the resolved one.
func (c *cloud) stateKey(cfg *config.Config) string {
	return placementKey(c.placement) + " " + cfg.Engine.ID // no userinfo: no credential in the file
}
