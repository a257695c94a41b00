package etcdtest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Secure is an etcd run as operators secure it: TLS with client
// certificates (--client-cert-auth) and users (auth enabled), with one
// user whose role may read and write Prefix alone.
type Secure struct {
	URL string
	// CA signed the server's and Cert's certificates; Other is a
	// client certificate no CA of etcd's signed, for the refusal tests.
	CA, Cert, Key, OtherCert, OtherKey string
	// User and Password log in with the role on Prefix; Root is etcd's
	// root user's password.
	User, Password, Root, Prefix string

	server, serverKey string
}

// StartSecure runs a Secure etcd whose engine role covers prefix; its
// files are in a temporary directory.
func StartSecure(t testing.TB, prefix string) *Secure {
	t.Helper()
	dir := t.TempDir()
	s := &Secure{User: "rpengine", Password: "EtcdUserPw-" + rand.Text()[:8], Root: "EtcdRootPw-" + rand.Text()[:8], Prefix: prefix}
	ca, caKey := newCert(t, dir, "ca", nil, nil)
	s.CA = ca.file
	srv, _ := newCert(t, dir, "server", ca, caKey)
	s.server, s.serverKey = srv.file, srv.key
	cl, _ := newCert(t, dir, "client", ca, caKey)
	s.Cert, s.Key = cl.file, cl.key
	other, _ := newCert(t, dir, "other", nil, nil)
	s.OtherCert, s.OtherKey = other.file, other.key
	s.URL = start(t, s)
	s.enableAuth(t)
	return s
}

func (s *Secure) scheme() string {
	if s == nil {
		return "http"
	}
	return "https"
}

func (s *Secure) flags() []string {
	if s == nil {
		return nil
	}
	return []string{"--cert-file", s.server, "--key-file", s.serverKey, "--client-cert-auth", "--trusted-ca-file", s.CA}
}

func (s *Secure) transport() http.RoundTripper {
	if s == nil {
		return nil
	}
	return &http.Transport{TLSClientConfig: s.ClientTLS()}
}

// ClientTLS trusts CA and presents Cert.
func (s *Secure) ClientTLS() *tls.Config {
	pool := x509.NewCertPool()
	b, _ := os.ReadFile(s.CA)
	pool.AppendCertsFromPEM(b)
	c, _ := tls.LoadX509KeyPair(s.Cert, s.Key)
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{c}}
}

// enableAuth adds root and the engine's user, its role read-write on
// Prefix alone, and turns auth on.
func (s *Secure) enableAuth(t testing.TB) {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{s.URL}, TLS: s.ClientTLS(), DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	steps := []func() error{
		func() error { _, err := cli.UserAdd(ctx, "root", s.Root); return err },
		func() error { _, err := cli.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := cli.RoleAdd(ctx, "rpengine"); return err },
		func() error {
			_, err := cli.RoleGrantPermission(ctx, "rpengine", s.Prefix, clientv3.GetPrefixRangeEnd(s.Prefix), clientv3.PermissionType(clientv3.PermReadWrite))
			return err
		},
		func() error { _, err := cli.UserAdd(ctx, s.User, s.Password); return err },
		func() error { _, err := cli.UserGrantRole(ctx, s.User, "rpengine"); return err },
		func() error { _, err := cli.AuthEnable(ctx); return err },
	}
	for i, f := range steps {
		if err := f(); err != nil {
			t.Fatalf("etcd auth setup, step %d: %v", i+1, err)
		}
	}
}

type certFile struct {
	file, key string
	cert      *x509.Certificate
}

// newCert writes a P-256 certificate for 127.0.0.1 named name, signed by
// parent (nil: a self-signed CA).
func newCert(t testing.TB, dir, name string, parent *certFile, parentKey *ecdsa.PrivateKey) (*certFile, *ecdsa.PrivateKey) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "rpengine test " + name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	signer, signerKey := tmpl, k
	if parent == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
	} else {
		signer, signerKey = parent.cert, parentKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &k.PublicKey, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	kb, _ := x509.MarshalECPrivateKey(k)
	c := &certFile{file: filepath.Join(dir, name+".pem"), key: filepath.Join(dir, name+"-key.pem"), cert: cert}
	if err := os.WriteFile(c.file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return c, k
}
