package events

import (
	"crypto/tls"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
)

// amqps:// is dialled with TLS made here, under capConn: the broker gets
// AMQP's protocol header inside TLS checked against the URL's
// cacertfile, and amqp091-go, given the plain scheme with the port kept,
// does not wrap it again.
func TestDialTLSUnderTheCap(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: srv.TLS.Certificates})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- err.Error()
			return
		}
		defer c.Close()
		b := make([]byte, 8)
		_, err = io.ReadFull(c, b)
		got <- string(b) + errString(err)
	}()
	_, capped, err := dial("amqps://guest:guest@"+ln.Addr().String()+"/?cacertfile="+ca, amqp.Config{})
	if err == nil {
		t.Fatal("a broker that hung up after the protocol header: no error")
	}
	if h := <-got; h != "AMQP\x00\x00\x09\x01" || capped == nil {
		t.Fatalf("the broker read %q (capped %v)", h, capped != nil)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return " " + err.Error()
}

func TestPlainSchemeKeepsThePortAndQuery(t *testing.T) {
	got, err := plainScheme("amqps://u:p@rabbit.example/vh?heartbeat=5", 5671)
	if err != nil || got != "amqp://u:p@rabbit.example:5671/vh?heartbeat=5" {
		t.Fatalf("%q %v", got, err)
	}
}
