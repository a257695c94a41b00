package ops_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/rpengine/rpengine/internal/ops"
)

func fetchURL(t *testing.T, c *http.Client, url, host string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if host != "" {
		req.Host = host
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func serveWith(t *testing.T, o *ops.Ops, c ops.ServeConfig) []string {
	t.Helper()
	bound, stop, err := o.ServeWith(c, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return bound
}

// Every answer carries the security headers; a Host the allow-list does
// not know (DNS rebinding: evil.example resolved to 127.0.0.1) gets 421.
func TestSecurityHeadersAndHostAllowList(t *testing.T) {
	o := ops.New(nil)
	addr := serveWith(t, o, ops.ServeConfig{Listen: "127.0.0.1:0", AllowedHosts: []string{"engine.example"}})[0]
	_, port, _ := net.SplitHostPort(addr)
	for _, c := range []struct {
		host string
		code int
	}{
		{"", 200}, {"localhost:" + port, 200}, {"LOCALHOST", 200}, {"[::1]:" + port, 200}, {"engine.example", 200},
		{"evil.example", 421}, {"evil.example:" + port, 421}, {"10.0.0.5", 421}, {"127.0.0.1.evil.example", 421},
	} {
		for _, path := range []string{"/", "/metrics", "/healthz", "/node/x"} {
			resp, body := fetchURL(t, http.DefaultClient, "http://"+addr+path, c.host)
			want := c.code
			if want == 200 && path == "/node/x" {
				want = 404
			}
			if want == 200 && path == "/healthz" {
				want = resp.StatusCode // 503 before the first cycle: the allow-list is what is tested
			}
			if resp.StatusCode != want {
				t.Errorf("Host %q %s: %d, want %d: %s", c.host, path, resp.StatusCode, want, body)
			}
			if c.code == 421 && !strings.Contains(body, "server.allowed_hosts") {
				t.Errorf("Host %q: the refusal does not say what allows it: %s", c.host, body)
			}
			for k, v := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY"} {
				if resp.Header.Get(k) != v {
					t.Errorf("Host %q %s: %s %q", c.host, path, k, resp.Header.Get(k))
				}
			}
			if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") {
				t.Errorf("%s: CSP %q", path, csp)
			}
		}
	}
	// Listening on every address, IP literals are served (they cannot be
	// rebound), names still need the list.
	any := serveWith(t, o, ops.ServeConfig{Listen: "0.0.0.0:0"})[0]
	_, port, _ = net.SplitHostPort(any)
	if resp, _ := fetchURL(t, http.DefaultClient, "http://127.0.0.1:"+port+"/", "10.1.2.3:"+port); resp.StatusCode != 200 {
		t.Errorf("an IP literal on a wildcard listener: %d", resp.StatusCode)
	}
	if resp, _ := fetchURL(t, http.DefaultClient, "http://127.0.0.1:"+port+"/", "evil.example"); resp.StatusCode != 421 {
		t.Errorf("a name on a wildcard listener: %d", resp.StatusCode)
	}
}

// /metrics can have its own listener; the status page's then has none.
func TestSeparateMetricsListener(t *testing.T) {
	o := ops.New(nil)
	b := serveWith(t, o, ops.ServeConfig{Listen: "127.0.0.1:0", MetricsListen: "127.0.0.1:0"})
	if resp, _ := fetchURL(t, http.DefaultClient, "http://"+b[0]+"/metrics", ""); resp.StatusCode != 404 {
		t.Errorf("/metrics on the page's listener: %d", resp.StatusCode)
	}
	if resp, body := fetchURL(t, http.DefaultClient, "http://"+b[1]+"/metrics", ""); resp.StatusCode != 200 || !strings.Contains(body, "rpengine_") {
		t.Errorf("/metrics on its listener: %d", resp.StatusCode)
	}
	if resp, _ := fetchURL(t, http.DefaultClient, "http://"+b[1]+"/", ""); resp.StatusCode != 404 {
		t.Errorf("the page on the metrics listener: %d", resp.StatusCode)
	}
	if _, _, err := o.ServeWith(ops.ServeConfig{Listen: "127.0.0.1:0", MetricsListen: b[1]}, slog.New(slog.DiscardHandler)); err == nil ||
		!strings.Contains(err.Error(), "server.metrics_listen") {
		t.Errorf("a taken metrics address: %v", err)
	}
}

// TLS and basic auth come from a Prometheus web configuration file.
func TestWebConfigTLSAndBasicAuth(t *testing.T) {
	dir := t.TempDir()
	cert, key := selfSigned(t, dir)
	hash, _ := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	webCfg := filepath.Join(dir, "web.yml")
	os.WriteFile(webCfg, []byte("tls_server_config:\n  cert_file: "+cert+"\n  key_file: "+key+"\nbasic_auth_users:\n  prom: "+string(hash)+"\n"), 0o600)
	o := ops.New(nil)
	b := serveWith(t, o, ops.ServeConfig{Listen: "127.0.0.1:0", MetricsListen: "127.0.0.1:0", WebConfigFile: webCfg})
	pool := x509.NewCertPool()
	pem, _ := os.ReadFile(cert)
	pool.AppendCertsFromPEM(pem)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	for _, addr := range b {
		if resp, _ := fetchURL(t, c, "https://"+addr+"/metrics", ""); resp.StatusCode != 401 {
			t.Errorf("%s without credentials: %d", addr, resp.StatusCode)
		}
		req, _ := http.NewRequest("GET", "https://"+addr+"/metrics", nil)
		req.SetBasicAuth("prom", "s3cret")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if want := map[bool]int{true: 404, false: 200}[addr == b[0]]; resp.StatusCode != want {
			t.Errorf("%s with credentials: %d, want %d", addr, resp.StatusCode, want)
		}
		// Plain HTTP to a TLS port gets a 400 answer, not the metrics.
		if r, err := http.Get("http://" + addr + "/metrics"); err == nil {
			r.Body.Close()
			if r.StatusCode == 200 {
				t.Errorf("%s answers plain HTTP", addr)
			}
		}
	}
	os.WriteFile(webCfg, []byte("tls_server_config:\n  cert_file: /nonexistent\n"), 0o600)
	if _, _, err := o.ServeWith(ops.ServeConfig{Listen: "127.0.0.1:0", WebConfigFile: webCfg}, slog.New(slog.DiscardHandler)); err == nil ||
		!strings.Contains(err.Error(), "server.web_config_file") {
		t.Errorf("a broken web config: %v", err)
	}
}

func selfSigned(t *testing.T, dir string) (cert, key string) {
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "rpengine test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(k)
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return cert, key
}

// Control and bidi characters from a node's name reach the page as
// visible escapes, never raw.
func TestPageEscapesControlAndBidi(t *testing.T) {
	r := newRig(t, 2)
	evil := "gpu\u202eexe.txt\x1b[31m\u2066x\u200b"
	r.src.set(func(s *source) { s.nodes[0].Name = evil })
	r.cycle()
	for _, path := range []string{"/", "/node/" + nodeUUID(0)} {
		rec := httptest.NewRecorder()
		r.ops.Handler().ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		page := rec.Body.String()
		for _, raw := range []string{"\u202e", "\x1b", "\u2066", "\u200b"} {
			if strings.Contains(page, raw) {
				t.Errorf("%s: %q reaches the page raw", path, raw)
			}
		}
		if !strings.Contains(page, `gpu\u202eexe.txt\u001b[31m\u2066x\u200b`) {
			t.Errorf("%s: the name is not shown escaped", path)
		}
	}
}

// The page shows the Placement endpoint without its password, whoever
// configured it.
func TestPageRedactsTheEndpoint(t *testing.T) {
	o := ops.New(nil)
	o.Configure(ops.Info{Placement: "http://admin:Pw0rd1234@placement:8778"})
	rec := httptest.NewRecorder()
	o.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if page := rec.Body.String(); strings.Contains(page, "Pw0rd1234") || !strings.Contains(page, "http://admin:xxxxx@placement:8778") {
		t.Fatalf("page:\n%s", page)
	}
}
