package coord

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
)

// Access is how an engine proves itself to etcd, as operators secure it:
// client TLS (etcd's --client-cert-auth, --trusted-ca-file) and an etcd
// user (--auth). The zero Access is plain and anonymous.
type Access struct {
	CAFile   string // PEM: the CA of etcd's server certificate (none: the system's)
	CertFile string // PEM: this engine's client certificate
	KeyFile  string // PEM: its key
	User     string
	Password string
}

// tlsConfig is the client TLS of a, nil when a gives no TLS file (an
// https:// endpoint then uses the system's CAs).
func (a Access) tlsConfig() (*tls.Config, error) {
	if a.CAFile == "" && a.CertFile == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if a.CAFile != "" {
		pem, err := os.ReadFile(a.CAFile)
		if err != nil {
			return nil, fmt.Errorf("coord.ca_file: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("coord.ca_file %s: no PEM certificate in it", a.CAFile)
		}
	}
	if a.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(a.CertFile, a.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("coord.cert_file %s, coord.key_file %s: %w", a.CertFile, a.KeyFile, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// dial makes a client that reconnects within a fraction of the TTL after
// etcd comes back (gRPC's default backoff grows to two minutes). With a
// user, etcd's client logs in here: a wrong password fails at once.
//
// count, if not nil, counts the client's calls: each unary call and each
// stream opened (a watch, the lease's keep-alive), not a stream's
// messages.
func dial(endpoints []string, a Access, ttl time.Duration, count *atomic.Int64) (*clientv3.Client, error) {
	tc, err := a.tlsConfig()
	if err != nil {
		return nil, err
	}
	bo := backoff.DefaultConfig
	bo.BaseDelay, bo.MaxDelay = 100*time.Millisecond, max(ttl/4, 250*time.Millisecond)
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		TLS:         tc,
		Username:    a.User,
		Password:    a.Password,
		Logger:      zap.NewNop(),
		DialOptions: append([]grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{Backoff: bo, MinConnectTimeout: time.Second})}, counting(count)...),
	})
	if err != nil {
		if a.User != "" {
			return nil, fmt.Errorf("etcd %v as user %q: %w", endpoints, a.User, err)
		}
		return nil, fmt.Errorf("etcd %v: %w", endpoints, err)
	}
	return cli, nil
}

// ErrNoAnswer is CheckAccess's error when etcd does not answer at all.
var ErrNoAnswer = errors.New("no answer within 5s")

// CheckAccess proves a can reach etcd at endpoints before an engine
// relies on it: each endpoint's TLS handshake with the client
// certificate (a refusal is named, where gRPC would only retry until a
// timeout), then a read of prefix as the user. An etcd that does not
// answer is ErrNoAnswer: the start goes on, its registration waits.
func CheckAccess(ctx context.Context, endpoints []string, a Access, prefix string) error {
	tc, err := a.tlsConfig()
	if err != nil {
		return err
	}
	for _, e := range endpoints {
		if err := handshake(ctx, e, tc, a); err != nil {
			return err
		}
	}
	cli, err := dial(endpoints, a, 4*time.Second, nil)
	if err != nil {
		return err
	}
	defer cli.Close()
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err = cli.Get(rctx, prefix, clientv3.WithPrefix(), clientv3.WithLimit(1), clientv3.WithKeysOnly())
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("etcd %v: %w", endpoints, ErrNoAnswer)
	}
	if err != nil {
		return fmt.Errorf("etcd %v: reading %s%s: %w", endpoints, prefix, asUser(a), err)
	}
	return nil
}

func asUser(a Access) string {
	if a.User == "" {
		return ""
	}
	return fmt.Sprintf(" as user %q", a.User)
}

// handshake opens one TLS connection to an https endpoint and waits a
// moment for a refusal: under TLS 1.3 a server rejects the client's
// certificate after the handshake, with an alert the first read gets.
// Bytes (etcd's HTTP/2 settings) or silence mean it was accepted.
func handshake(ctx context.Context, endpoint string, tc *tls.Config, a Access) error {
	u, err := url.Parse(endpoint)
	if err != nil || u.Scheme != "https" {
		return nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if tc != nil {
		cfg = tc.Clone()
	}
	cfg.ServerName, cfg.NextProtos = u.Hostname(), []string{"h2"}
	raw, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil // etcd down: registration waits for it, as without TLS
	}
	conn := tls.Client(raw, cfg)
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	if err = conn.HandshakeContext(ctx); err == nil {
		conn.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		_, err = conn.Read(make([]byte, 1))
		if ne := net.Error(nil); err == nil || errors.As(err, &ne) && ne.Timeout() {
			return nil // its HTTP/2 settings, or silence: accepted
		}
	}
	who := "no client certificate"
	if a.CertFile != "" {
		who = "client certificate " + a.CertFile
	}
	return fmt.Errorf("etcd %s refused the TLS connection (%s, CA %s): %w", endpoint, who, orSystem(a.CAFile), err)
}

func orSystem(ca string) string {
	if ca == "" {
		return "the system's"
	}
	return ca
}

// counting is the dial options that count the calls in n; none for nil.
func counting(n *atomic.Int64) []grpc.DialOption {
	if n == nil {
		return nil
	}
	return []grpc.DialOption{
		grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoke grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			n.Add(1)
			return invoke(ctx, method, req, reply, cc, opts...)
		}),
		grpc.WithChainStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, open grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
			n.Add(1)
			return open(ctx, desc, cc, method, opts...)
		}),
	}
}
