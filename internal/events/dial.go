package events

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/url"
	"os"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// dial connects to the broker with every byte read through a capConn.
// amqp091-go would wrap TLS around the connection its Dial returns, out
// of capConn's sight, so for amqps:// the TLS is made here (with the
// URL's cacertfile, certfile, keyfile and server_name_indication, as
// amqp091-go reads them) and amqp091-go is given the plain scheme.
func dial(rawURL string, cfg amqp.Config) (*amqp.Connection, *capConn, error) {
	uri, err := amqp.ParseURI(rawURL)
	if err != nil {
		return nil, nil, err
	}
	var tlsCfg *tls.Config
	if uri.Scheme == "amqps" {
		if tlsCfg, err = tlsFromURI(uri); err != nil {
			return nil, nil, err
		}
		if rawURL, err = plainScheme(rawURL, uri.Port); err != nil {
			return nil, nil, err
		}
	}
	var capped *capConn
	cfg.FrameSize = maxFrame
	cfg.Dial = func(network, addr string) (net.Conn, error) {
		c, err := net.DialTimeout(network, addr, 10*time.Second)
		if err != nil {
			return nil, err
		}
		if tlsCfg != nil {
			tc := tls.Client(c, tlsCfg)
			_ = tc.SetDeadline(time.Now().Add(10 * time.Second))
			if err := tc.Handshake(); err != nil {
				c.Close()
				return nil, err
			}
			_ = tc.SetDeadline(time.Time{})
			c = tc
		}
		capped = newCapConn(c, maxMessageBytes)
		return capped, nil
	}
	conn, err := amqp.DialConfig(rawURL, cfg)
	return conn, capped, err
}

// plainScheme is rawURL with amqp:// for amqps:// and its port explicit.
func plainScheme(rawURL string, port int) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", err
	}
	u.Scheme = "amqp"
	u.Host = net.JoinHostPort(u.Hostname(), fmt.Sprint(port))
	return u.String(), nil
}

// tlsFromURI is the TLS setup amqp091-go makes for an amqps:// URL.
func tlsFromURI(uri amqp.URI) (*tls.Config, error) {
	cfg := &tls.Config{ServerName: uri.ServerName, MinVersion: tls.VersionTLS12}
	if cfg.ServerName == "" {
		cfg.ServerName = uri.Host
	}
	if uri.CACertFile != "" {
		data, err := os.ReadFile(uri.CACertFile)
		if err != nil {
			return nil, fmt.Errorf("read CA certificate: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(data) {
			return nil, fmt.Errorf("%s holds no PEM certificate", uri.CACertFile)
		}
	}
	if uri.CertFile != "" && uri.KeyFile != "" {
		cert, err := tls.LoadX509KeyPair(uri.CertFile, uri.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("load client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
