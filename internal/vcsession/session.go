package vcsession

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/soap"
)

// SDKPath is where vCenter serves its SOAP API, under the granted URL.
const SDKPath = "/sdk"

// Session is one vCenter login, shared by every request of the plugins
// it is granted to. Safe for concurrent use.
type Session struct {
	sdk  *url.URL
	user *url.Userinfo
	rt   http.RoundTripper

	mu     sync.Mutex
	cookie *http.Cookie // nil: not logged in
	logins int
}

// New prepares a session for the vCenter at endpoint (its base URL, e.g.
// https://vc.example.com); it logs in at the first request. rt carries the
// engine's own requests (nil: http.DefaultTransport).
func New(endpoint, user, password string, rt http.RoundTripper) (*Session, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("vcenter endpoint %q is not an http(s) URL", endpoint)
	}
	if user == "" || password == "" {
		return nil, errors.New("vcenter: user and password are required")
	}
	if rt == nil {
		rt = http.DefaultTransport
	}
	sdk := *u
	sdk.Path = strings.TrimSuffix(u.Path, "/") + SDKPath
	sdk.User = nil
	return &Session{sdk: &sdk, user: url.UserPassword(user, password), rt: rt}, nil
}

// Logins counts the logins so far, for tests and logs.
func (s *Session) Logins() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logins
}

// Apply adds the session cookie, logging in first if there is none.
func (s *Session) Apply(ctx context.Context, req *http.Request) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cookie == nil {
		if err := s.login(ctx); err != nil {
			return err
		}
	}
	req.AddCookie(s.cookie)
	return nil
}

// Rejected is vCenter's NotAuthenticated fault, for a session that
// expired, was terminated, or that a restarted vCenter never knew: a SOAP
// fault (HTTP 500), or, from the PropertyCollector, a fault in an object's
// missingSet (HTTP 200; vcsim answers so). Either way it is an xsi:type
// attribute, which text in a property value cannot fake (XML escapes its
// quotes). A valid session lacking a privilege gets NoPermission instead.
func (s *Session) Rejected(_ int, _ http.Header, body []byte) bool {
	return bytes.Contains(body, notAuthenticated)
}

var notAuthenticated = []byte(`type="NotAuthenticated"`)

// Renew logs in again, unless another request already did since req
// was sent.
func (s *Session) Renew(ctx context.Context, req *http.Request) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cookie != nil {
		if c, err := req.Cookie(soap.SessionCookieName); err == nil && c.Value != s.cookie.Value {
			return nil
		}
	}
	s.cookie = nil
	return s.login(ctx)
}

// Close logs out, if logged in. A later request logs in again.
func (s *Session) Close(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cookie == nil {
		return nil
	}
	c, err := s.client(ctx, &cookieAdder{rt: s.rt, cookie: s.cookie})
	s.cookie = nil
	if err != nil {
		return err
	}
	if err := session.NewManager(c).Logout(ctx); err != nil {
		return fmt.Errorf("vcenter %s: logout: %w", s.sdk.Host, err)
	}
	return nil
}

// login runs SessionManager.Login and keeps the cookie vCenter set.
func (s *Session) login(ctx context.Context) error {
	catch := &cookieCatcher{rt: s.rt}
	c, err := s.client(ctx, catch)
	if err != nil {
		return err
	}
	if err := session.NewManager(c).Login(ctx, s.user); err != nil {
		return fmt.Errorf("vcenter %s: login as %s: %w", s.sdk.Host, s.user.Username(), scrub(err, s.user))
	}
	if catch.cookie == nil {
		return fmt.Errorf("vcenter %s: login answered without a %s cookie", s.sdk.Host, soap.SessionCookieName)
	}
	s.cookie = catch.cookie
	s.logins++
	return nil
}

func (s *Session) client(ctx context.Context, rt http.RoundTripper) (*vim25.Client, error) {
	sc := soap.NewClient(s.sdk, false)
	sc.Client.Transport = rt
	c, err := vim25.NewClient(ctx, sc)
	if err != nil {
		return nil, fmt.Errorf("vcenter %s: %w", s.sdk.Host, err)
	}
	return c, nil
}

// scrub keeps the password out of an error, whatever the library put in.
func scrub(err error, u *url.Userinfo) error {
	if p, ok := u.Password(); ok && strings.Contains(err.Error(), p) {
		return errors.New(strings.ReplaceAll(err.Error(), p, "***"))
	}
	return err
}

// cookieCatcher remembers the session cookie a response sets (read from
// the header: a jar would drop a Secure cookie on an http URL).
type cookieCatcher struct {
	rt     http.RoundTripper
	cookie *http.Cookie
}

func (c *cookieCatcher) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.rt.RoundTrip(req)
	if err == nil {
		for _, k := range resp.Cookies() {
			if k.Name == soap.SessionCookieName {
				c.cookie = &http.Cookie{Name: k.Name, Value: k.Value, Quoted: k.Quoted}
			}
		}
	}
	return resp, err
}

// cookieAdder sends the session cookie on every request.
type cookieAdder struct {
	rt     http.RoundTripper
	cookie *http.Cookie
}

func (c *cookieAdder) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.Header.Del("Cookie")
	r.AddCookie(c.cookie)
	return c.rt.RoundTrip(r)
}
