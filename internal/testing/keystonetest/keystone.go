package keystonetest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Credentials the server accepts.
const (
	User        = "rpengine"
	UserDomain  = "Default"
	Password    = "secret"
	Project     = "service"
	AppCredID   = "appcred-1"
	AppCredName = "rpengine-app"
	AppSecret   = "app-secret"
	Region      = "RegionOne"
)

// Server is a fake Keystone. It is safe for concurrent use.
type Server struct {
	srv *httptest.Server
	mux *http.ServeMux

	mu        sync.Mutex
	lifetimes []time.Duration // per issue from lifeFrom on, the last one repeats
	lifeFrom  int
	tokens    map[string]time.Time
	issued    []Issue
	catalog   []entry
	rejected  int // service requests refused for a bad token
	ageNext   time.Duration
	refuse    bool // every login refused, as after a password change
	// password and appSecret are what logins must carry: Password and
	// AppSecret unless SetSecrets changed them.
	password, appSecret string
}

// Issue records one token issued.
type Issue struct {
	Method    string // "password" or "application_credential"
	Token     string
	ExpiresAt time.Time
}

type entry struct {
	Type      string     `json:"type"`
	Name      string     `json:"name"`
	ID        string     `json:"id"`
	Endpoints []endpoint `json:"endpoints"`
}

type endpoint struct {
	ID        string `json:"id"`
	Interface string `json:"interface"`
	Region    string `json:"region"`
	RegionID  string `json:"region_id"`
	URL       string `json:"url"`
}

// New starts a server whose tokens live one hour.
func New() *Server {
	s := &Server{mux: http.NewServeMux(), tokens: map[string]time.Time{}, lifetimes: []time.Duration{time.Hour},
		password: Password, appSecret: AppSecret}
	s.mux.HandleFunc("POST /v3/auth/tokens", s.issue)
	s.srv = httptest.NewServer(s.mux)
	return s
}

// SetSecrets makes logins need this password and application credential
// secret instead of Password and AppSecret (a scan for leaked secrets
// wants ones no other text holds).
func (s *Server) SetSecrets(password, appSecret string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.password, s.appSecret = password, appSecret
}

// URL is the server's root.
func (s *Server) URL() string { return s.srv.URL }

// AuthURL is the v3 identity endpoint.
func (s *Server) AuthURL() string { return s.srv.URL + "/v3" }

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// SetLifetimes sets how long the next tokens live, one per issue from
// now on; the last repeats.
func (s *Server) SetLifetimes(ds ...time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lifetimes, s.lifeFrom = ds, len(s.issued)
}

// AgeNext makes the next token issued as if age ago (issued_at and
// expires_at move back, the lifetime stays): a token close to expiry
// without a token lifetime shorter than the refresh margin.
func (s *Server) AgeNext(age time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ageNext = age
}

// RefuseLogins makes every login fail with 401 (on) or works again (off).
func (s *Server) RefuseLogins(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse = on
}

// AddService lists url in the catalog under serviceType, on the public
// and internal interfaces of Region.
func (s *Server) AddService(serviceType, url string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := entry{Type: serviceType, Name: serviceType, ID: serviceType + "-id"}
	for _, iface := range []string{"public", "internal"} {
		e.Endpoints = append(e.Endpoints, endpoint{ID: serviceType + "-" + iface, Interface: iface,
			Region: Region, RegionID: Region, URL: url})
	}
	s.catalog = append(s.catalog, e)
}

// Mount serves h under /<name>/ (prefix stripped), refusing requests
// without a live token with 401, and lists it in the catalog as
// serviceType. h sees the token "admin". It returns the endpoint URL.
func (s *Server) Mount(name, serviceType string, h http.Handler) string {
	prefix := "/" + name
	s.mux.Handle(prefix+"/", http.StripPrefix(prefix, s.guard(h)))
	url := s.srv.URL + prefix
	s.AddService(serviceType, url)
	return url
}

func (s *Server) guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.Valid(r.Header.Get("X-Auth-Token")) {
			s.mu.Lock()
			s.rejected++
			s.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error": {"code": 401, "title": "Unauthorized", "message": "The request you have made requires authentication."}}`)
			return
		}
		// As keystonemiddleware does, the service learns the caller's
		// roles, not the token: noauth2 services (the fake Placement)
		// take the token "admin" for the admin role.
		r.Header.Set("X-Auth-Token", "admin")
		h.ServeHTTP(w, r)
	})
}

// Valid says whether token was issued, is not revoked and has not expired.
func (s *Server) Valid(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.tokens[token]
	return ok && time.Now().Before(exp)
}

// Revoke invalidates every token issued so far.
func (s *Server) Revoke() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.tokens)
}

// Issued lists the tokens issued so far, oldest first.
func (s *Server) Issued() []Issue {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Issue(nil), s.issued...)
}

// Rejected counts service requests refused for a bad or missing token.
func (s *Server) Rejected() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rejected
}

type authRequest struct {
	Auth struct {
		Identity struct {
			Methods  []string `json:"methods"`
			Password struct {
				User struct {
					Name     string `json:"name"`
					Password string `json:"password"`
					Domain   struct {
						Name string `json:"name"`
						ID   string `json:"id"`
					} `json:"domain"`
				} `json:"user"`
			} `json:"password"`
			AppCred struct {
				ID     string `json:"id"`
				Name   string `json:"name"`
				Secret string `json:"secret"`
				User   struct {
					Name string `json:"name"`
				} `json:"user"`
			} `json:"application_credential"`
		} `json:"identity"`
		Scope json.RawMessage `json:"scope"`
	} `json:"auth"`
}

func (s *Server) issue(w http.ResponseWriter, r *http.Request) {
	var req authRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error": {"code": 400, "message": "malformed"}}`, http.StatusBadRequest)
		return
	}
	id := req.Auth.Identity
	method := strings.Join(id.Methods, ",")
	s.mu.Lock()
	password, appSecret, refuse := s.password, s.appSecret, s.refuse
	s.mu.Unlock()
	ok := false
	switch method {
	case "password":
		u := id.Password.User
		ok = u.Name == User && u.Password == password && (u.Domain.Name == UserDomain || u.Domain.ID == "default")
	case "application_credential":
		a := id.AppCred
		ok = a.Secret == appSecret && (a.ID == AppCredID || a.Name == AppCredName && a.User.Name == User)
	}
	ok = ok && !refuse
	if !ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"error": {"code": 401, "title": "Unauthorized", "message": "The request you have made requires authentication."}}`)
		return
	}
	token := newToken()
	s.mu.Lock()
	life := s.lifetimes[min(len(s.issued)-s.lifeFrom, len(s.lifetimes)-1)]
	issuedAt := time.Now().Add(-s.ageNext).UTC()
	s.ageNext = 0
	exp := issuedAt.Add(life)
	s.tokens[token] = exp
	s.issued = append(s.issued, Issue{Method: method, Token: token, ExpiresAt: exp})
	catalog := append([]entry(nil), s.catalog...)
	s.mu.Unlock()

	body := map[string]any{"token": map[string]any{
		"methods":    id.Methods,
		"expires_at": exp.Format("2006-01-02T15:04:05.000000Z"),
		"issued_at":  issuedAt.Format("2006-01-02T15:04:05.000000Z"),
		"user":       map[string]any{"id": "u-1", "name": User, "domain": map[string]string{"id": "default", "name": UserDomain}},
		"project":    map[string]any{"id": "p-1", "name": Project, "domain": map[string]string{"id": "default", "name": "Default"}},
		"roles":      []map[string]string{{"id": "r-1", "name": "admin"}},
		"catalog":    catalog,
	}}
	w.Header().Set("X-Subject-Token", token)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	json.NewEncoder(w).Encode(body)
}

func newToken() string {
	b := make([]byte, 16)
	rand.Read(b)
	return "gAAAA" + hex.EncodeToString(b)
}
