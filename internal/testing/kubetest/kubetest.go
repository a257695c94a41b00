package kubetest

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/testing/etcdtest"
	"github.com/rpengine/rpengine/internal/testing/testenv"
)

// Version is the kube-apiserver scripts/kube/install.sh builds.
const Version = "v1.37.2"

// EnvBinary names a kube-apiserver binary in place of the cached one.
const EnvBinary = "RPENGINE_KUBE_APISERVER"

// EnvRun set to "1" runs the tests that need a kube-apiserver (make
// test-kube); without it they skip, so make test stays quick.
const EnvRun = "RPENGINE_KUBE_E2E"

// Server is one running kube-apiserver.
type Server struct {
	URL   string // https://127.0.0.1:port
	Token string // a bearer token of system:masters
	// UserToken is the bearer token of user "rpengine", in no group: it
	// may do only what a RoleBinding grants it.
	UserToken string
	CAFile    string // the self-signed serving certificate and its CA
	Log       string
	dir       string
}

var started atomic.Int64

// Binary finds the kube-apiserver: EnvBinary, else the install script's
// cache dir, else PATH.
func Binary() (string, error) {
	if p := os.Getenv(EnvBinary); p != "" {
		return p, nil
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	dir := os.Getenv("RPENGINE_KUBE_DIR")
	if dir == "" {
		dir = filepath.Join(cache, "rpengine", "kube-apiserver-"+Version)
	}
	if p := filepath.Join(dir, "kube-apiserver"); fileExists(p) {
		return p, nil
	}
	return exec.LookPath("kube-apiserver")
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// Start runs a kube-apiserver on a free loopback port, with a fresh etcd,
// and stops both when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: not starting kube-apiserver")
	}
	if os.Getenv(EnvRun) != "1" {
		t.Skip(EnvRun + " unset: the Kubernetes tests run in make test-kube")
	}
	bin, err := Binary()
	if err != nil {
		testenv.Unavailable(t, "kube-apiserver not built (run scripts/kube/install.sh)")
	}
	etcd := etcdtest.Start(t)
	s := &Server{dir: t.TempDir(), Token: "rpengine-test-admin-" + strconv.FormatInt(time.Now().UnixNano(), 36)}
	if err := s.files(); err != nil {
		t.Fatalf("kube-apiserver files: %v", err)
	}
	var errs []error
	for try := range 3 {
		svc, err := s.launch(bin, etcd, try)
		if err == nil {
			t.Cleanup(svc.Stop)
			return s
		}
		errs = append(errs, fmt.Errorf("try %d: %w", try+1, err))
		if !errors.Is(err, testenv.ErrExited) {
			break
		}
	}
	t.Fatalf("start kube-apiserver: %v", errors.Join(errs...))
	return nil
}

// files writes the token file and the service-account key.
func (s *Server) files() error {
	s.UserToken = s.Token + "-user"
	tokens := fmt.Sprintf("%s,admin,admin,\"system:masters\"\n%s,rpengine,rpengine\n", s.Token, s.UserToken)
	if err := os.WriteFile(filepath.Join(s.dir, "tokens.csv"), []byte(tokens), 0o600); err != nil {
		return err
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	b := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	return os.WriteFile(filepath.Join(s.dir, "sa.key"), b, 0o600)
}

func (s *Server) launch(bin, etcd string, try int) (*testenv.Service, error) {
	port, err := testenv.FreePort()
	if err != nil {
		return nil, err
	}
	s.URL = "https://127.0.0.1:" + strconv.Itoa(port)
	certs := filepath.Join(s.dir, "certs")
	s.CAFile = filepath.Join(certs, "apiserver.crt")
	cmd := exec.Command(bin, "--etcd-servers="+etcd, "--etcd-prefix=/kubetest-"+strconv.FormatInt(started.Add(1), 10),
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", "--secure-port="+strconv.Itoa(port),
		"--cert-dir="+certs, "--token-auth-file="+filepath.Join(s.dir, "tokens.csv"), "--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file="+filepath.Join(s.dir, "sa.key"),
		"--service-account-signing-key-file="+filepath.Join(s.dir, "sa.key"),
		"--service-cluster-ip-range=10.96.0.0/24", "--endpoint-reconciler-type=none", "--enable-priority-and-fairness=false", "--v=1")
	s.Log = filepath.Join(s.dir, fmt.Sprintf("kube-apiserver-%d.log", try))
	return testenv.Launch(cmd, s.Log, s.URL, s.ready, 3*time.Minute, 10*time.Second)
}

// ready is /readyz answering 200 and the default namespace existing.
func (s *Server) ready(_ *http.Client, url string) bool {
	hc := s.client()
	auth := "Bearer " + s.Token
	return testenv.GetOK(hc, url+"/readyz", "Authorization", auth) &&
		testenv.GetOK(hc, url+"/api/v1/namespaces/default", "Authorization", auth)
}

func (s *Server) client() *http.Client {
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // readiness only
	return &http.Client{Timeout: 2 * time.Second, Transport: tr}
}

// Namespace creates a namespace for one test.
func (s *Server) Namespace(t testing.TB, name string) {
	t.Helper()
	s.Create(t, "/api/v1/namespaces", fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, name))
}

// Create posts the JSON object body to the collection at path as the
// administrator; an object that exists already is left as it is.
func (s *Server) Create(t testing.TB, path, body string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.URL+path, bytes.NewBufferString(body))
	req.Header.Set("Authorization", "Bearer "+s.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client().Do(req)
	if err != nil {
		t.Fatalf("create in %s: %v", path, err)
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusConflict {
		t.Fatalf("create in %s: %s %s", path, resp.Status, msg)
	}
}

// Kubeconfig writes a kubeconfig for the administrator's token, for the
// API server at server (s.URL, or a proxy in front of it), and returns
// its path.
func (s *Server) Kubeconfig(t testing.TB, server, namespace string) string {
	t.Helper()
	return s.KubeconfigAs(t, server, namespace, s.Token)
}

// KubeconfigAs is Kubeconfig with another bearer token (UserToken).
func (s *Server) KubeconfigAs(t testing.TB, server, namespace, token string) string {
	t.Helper()
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
current-context: test
clusters:
- name: test
  cluster:
    server: %s
    certificate-authority: %s
contexts:
- name: test
  context:
    cluster: test
    user: admin
    namespace: %s
users:
- name: admin
  user:
    token: %s
`, server, s.CAFile, namespace, token)
	f, err := os.CreateTemp(s.dir, "kubeconfig-*")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(kc); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}
