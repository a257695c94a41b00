package etcdtest

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"
)

// Proxy forwards TCP connections to one address until severed: then it
// closes every connection and refuses new ones, as a network partition
// between one client and etcd would (but faster to notice).
type Proxy struct {
	l      net.Listener
	scheme string
	target string

	mu      sync.Mutex
	severed bool
	conns   map[net.Conn]bool
}

// NewProxy forwards a new loopback port to targetURL's host:port (a
// URL, or a bare host:port taken as http); it is closed when the test
// ends.
func NewProxy(t testing.TB, targetURL string) *Proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	scheme, target, ok := strings.Cut(targetURL, "://")
	if !ok { // a bare host:port: plain http
		scheme, target = "http", targetURL
	}
	p := &Proxy{l: l, scheme: scheme, target: target, conns: map[net.Conn]bool{}}
	go p.serve()
	t.Cleanup(func() { l.Close(); p.Sever() })
	return p
}

// URL is the proxy's client URL, of the target's scheme (TLS passes
// through).
func (p *Proxy) URL() string { return p.scheme + "://" + p.l.Addr().String() }

// Sever cuts every connection and refuses new ones until Heal.
func (p *Proxy) Sever() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.severed = true
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// Heal accepts connections again.
func (p *Proxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.severed = false
}

func (p *Proxy) serve() {
	for {
		in, err := p.l.Accept()
		if err != nil {
			return
		}
		go p.pipe(in)
	}
}

func (p *Proxy) pipe(in net.Conn) {
	if !p.track(in) {
		in.Close()
		return
	}
	out, err := net.Dial("tcp", p.target)
	if err != nil || !p.track(out) {
		in.Close()
		if out != nil {
			out.Close()
		}
		return
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(out, in); done <- struct{}{} }()
	go func() { _, _ = io.Copy(in, out); done <- struct{}{} }()
	<-done
	in.Close()
	out.Close()
	p.mu.Lock()
	delete(p.conns, in)
	delete(p.conns, out)
	p.mu.Unlock()
}

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.severed {
		return false
	}
	p.conns[c] = true
	return true
}
