package auth

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"

	"github.com/rpengine/rpengine/internal/redact"
)

// Method is how the engine authenticates.
type Method string

const (
	NoAuth                Method = "noauth"                 // no Keystone: placement.token is sent as is
	Password              Method = "password"               // user and password, scoped to a project
	ApplicationCredential Method = "application_credential" // id (or name and user) and secret
	Cloud                 Method = "cloud"                  // a cloud named in clouds.yaml
	Env                   Method = "env"                    // the OS_* variables of an openrc file
)

// Methods lists the valid methods, for config checks and messages.
var Methods = []Method{NoAuth, Password, ApplicationCredential, Cloud, Env}

// Config says how to authenticate. Fields apply as Method says; see
// docs/CONFIGURATION.md's [auth] keys.
type Config struct {
	Method Method

	Cloud      string // Cloud: its name in clouds.yaml
	CloudsFile string // Cloud: the file; "" searches as openstackclient does

	AuthURL           string
	Username, UserID  string
	Password          string
	UserDomainName    string
	UserDomainID      string
	ProjectName       string
	ProjectID         string
	ProjectDomainName string
	ProjectDomainID   string

	ApplicationCredentialID     string
	ApplicationCredentialName   string
	ApplicationCredentialSecret string

	Region    string // catalog region; "" takes the first listed
	Interface string // catalog interface: public (default), internal or admin
	CACert    string // PEM bundle trusted for Keystone and the services

	// RefreshBefore re-authenticates this long before the token expires.
	RefreshBefore time.Duration
	// Timeout bounds one request to Keystone.
	Timeout time.Duration
	// Logger, if set, is warned when RefreshBefore has to be clamped.
	Logger *slog.Logger
}

// Session is an authenticated identity, or none for NoAuth. It is safe
// for concurrent use.
type Session struct {
	method Method
	pc     *gophercloud.ProviderClient // nil for NoAuth
	eo     gophercloud.EndpointOpts
	tls    *tls.Config
	who    string
	logins logins
}

const (
	defaultRefreshBefore = 5 * time.Minute
	defaultTimeout       = 30 * time.Second
)

// Open authenticates as cfg says. NoAuth returns at once; every other
// method issues a token, so a wrong password fails here, by name.
func Open(ctx context.Context, cfg Config) (*Session, error) {
	if cfg.Method == "" || cfg.Method == NoAuth {
		return &Session{method: NoAuth, who: "noauth"}, nil
	}
	r, err := resolve(cfg)
	if err != nil {
		return nil, err
	}
	pc, err := openstack.NewClient(r.ao.IdentityEndpoint)
	if err != nil {
		return nil, fmt.Errorf("auth_url %q: %w", redact.URL(r.ao.IdentityEndpoint), err)
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = r.tls
	pc.HTTPClient = http.Client{Timeout: orDefault(cfg.Timeout, defaultTimeout), Transport: transport}
	pc.ReauthBeforeTokenExpiration = orDefault(cfg.RefreshBefore, defaultRefreshBefore)
	pc.UserAgent.Prepend("rpengine")
	r.ao.AllowReauth = true // a 401 re-authenticates once, then retries
	where := redact.URL(r.ao.IdentityEndpoint) + " (" + r.who + ")"
	if err := openstack.AuthenticateV3(ctx, pc, &r.ao, gophercloud.EndpointOpts{}); err != nil {
		return nil, explain(where, err)
	}
	pc.ReauthBeforeTokenExpiration = clampRefresh(pc.ReauthBeforeTokenExpiration, tokenLifetime(pc), cfg.Logger)
	s := &Session{method: r.method, pc: pc, eo: r.eo, tls: r.tls, who: r.who}
	s.logins.wrap(pc, where)
	return s, nil
}

// Method is how this session authenticated (Env and Cloud resolve to the
// method they found).
func (s *Session) Method() Method { return s.method }

// Provider is the authenticated gophercloud client for Placement, or nil
// for NoAuth.
func (s *Session) Provider() *gophercloud.ProviderClient { return s.pc }

// TLS is the TLS configuration for the services, or nil for the system's.
func (s *Session) TLS() *tls.Config { return s.tls }

// Expires is when the current token expires (zero for NoAuth).
func (s *Session) Expires() time.Time {
	if s.pc == nil {
		return time.Time{}
	}
	return s.pc.TokenExpiry()
}

// String describes the identity without any secret.
func (s *Session) String() string { return s.who }

// Header is the credential the host adds to a plugin's HTTP call to a
// granted service: wasmhost.Options.AuthHeader. A token about to expire
// is refreshed first. NoAuth adds nothing.
func (s *Session) Header(service string) (name, value string) {
	if s.pc == nil {
		return "", ""
	}
	// AuthenticatedHeaders re-authenticates inside the refresh window,
	// bounded by the Keystone client's timeout; on failure it keeps the
	// old token and the service's 401 tells the plugin.
	return "X-Auth-Token", s.pc.AuthenticatedHeaders()["X-Auth-Token"]
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
