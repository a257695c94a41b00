package ops

import (
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
)

// hostCheck is the Host header allow-list that keeps DNS rebinding out: a
// page in a browser that fetches evil.example, resolved to 127.0.0.1,
// sends "Host: evil.example" and gets 421. By default it accepts the
// loopback names, the listen address's host and, when that is a wildcard
// (0.0.0.0, ::, empty), any IP literal and this machine's host name: an
// IP literal cannot be rebound.
type hostCheck struct {
	any   bool
	anyIP bool
	names map[string]bool
}

func newHostCheck(listen string, extra []string) hostCheck {
	c := hostCheck{names: map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true}}
	host, _, _ := net.SplitHostPort(listen)
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		c.anyIP = true
		if h, err := os.Hostname(); err == nil {
			c.names[strings.ToLower(h)] = true
		}
	} else {
		c.names[strings.ToLower(host)] = true
	}
	for _, h := range extra {
		if h == "*" {
			c.any = true
		}
		c.names[strings.ToLower(strings.TrimSuffix(h, "."))] = true
	}
	return c
}

func (c hostCheck) allows(hostport string) bool {
	if c.any {
		return true
	}
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if c.names[host] || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (c.anyIP || ip.IsLoopback())
}

// securityHeaders go on every answer: no MIME sniffing, no framing (the
// page has no script and loads nothing), no referrer.
var securityHeaders = map[string]string{
	"X-Content-Type-Options":  "nosniff",
	"X-Frame-Options":         "DENY",
	"Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
	"Referrer-Policy":         "no-referrer",
}

// guarded adds the security headers and refuses a Host the check does not
// allow, naming it and the key that would allow it.
func guarded(next http.Handler, c hostCheck) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range securityHeaders {
			w.Header().Set(k, v)
		}
		if !c.allows(r.Host) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusMisdirectedRequest)
			w.Write([]byte("Host " + strconv.QuoteToASCII(cutHost(r.Host)) + " is not served here; add it to server.allowed_hosts\n"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func cutHost(h string) string {
	if len(h) > 100 {
		return h[:100]
	}
	return h
}
