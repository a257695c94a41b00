// Package rabbittest starts Debian's rabbitmq-server for a test, on free
// loopback ports, with its own epmd, node name, database and cookie, so
// tests never touch a system broker. It is for tests only.
package rabbittest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rpengine/rpengine/internal/testing/testenv"
)

const (
	server       = "/usr/lib/rabbitmq/bin/rabbitmq-server"
	readyTimeout = 60 * time.Second
)

// Broker is one running (or stopped) RabbitMQ.
type Broker struct {
	// URL is amqp://guest:guest@127.0.0.1:PORT/ (guest may log in from
	// loopback only, which is all a test needs).
	URL  string
	Port int

	t        testing.TB
	dir      string
	epmdPort int
	mu       sync.Mutex
	procs    []*exec.Cmd // epmd, rabbitmq-server (each its own process group)
}

// Start starts a broker for this test alone; it is stopped when the test
// ends. It skips (or fails, with RPENGINE_REQUIRE_E2E=1) when Debian's
// rabbitmq-server is not installed.
func Start(t testing.TB) *Broker {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: not using a real RabbitMQ")
	}
	if _, err := os.Stat(server); err != nil {
		testenv.Unavailable(t, "rabbitmq-server not installed ("+server+" missing); run scripts/rabbitmq/install.sh")
	}
	b := &Broker{t: t, dir: t.TempDir()}
	var err error
	for range 3 { // another process may take a free port first
		if err = b.pickPorts(); err == nil {
			if err = b.start(); err == nil {
				break
			}
		}
		b.kill()
	}
	if err != nil {
		t.Fatalf("start rabbitmq: %v", err)
	}
	t.Cleanup(b.kill)
	return b
}

func (b *Broker) pickPorts() error {
	var err error
	if b.Port, err = testenv.FreePort(); err != nil {
		return err
	}
	if b.epmdPort, err = testenv.FreePort(); err != nil {
		return err
	}
	b.URL = "amqp://guest:guest@127.0.0.1:" + strconv.Itoa(b.Port) + "/"
	return nil
}

func (b *Broker) start() error {
	conf := fmt.Sprintf("listeners.tcp.default = 127.0.0.1:%d\nlog.console = true\nlog.file = false\n", b.Port)
	if err := os.WriteFile(filepath.Join(b.dir, "rabbitmq.conf"), []byte(conf), 0o600); err != nil {
		return err
	}
	epmd := exec.Command("epmd", "-port", strconv.Itoa(b.epmdPort), "-address", "127.0.0.1")
	if err := b.spawn(epmd, "epmd.log"); err != nil {
		return err
	}
	srv := exec.Command(server)
	srv.Env = append(os.Environ(),
		"HOME="+b.dir, // the Erlang cookie
		"ERL_EPMD_PORT="+strconv.Itoa(b.epmdPort),
		"RABBITMQ_NODENAME=rpt"+strconv.Itoa(b.Port)+"@localhost",
		"RABBITMQ_NODE_IP_ADDRESS=127.0.0.1",
		"RABBITMQ_NODE_PORT="+strconv.Itoa(b.Port),
		"RABBITMQ_DIST_PORT="+strconv.Itoa(distPort(b.Port)),
		"RABBITMQ_CONFIG_FILE="+filepath.Join(b.dir, "rabbitmq"),
		"RABBITMQ_MNESIA_BASE="+filepath.Join(b.dir, "mnesia"),
		"RABBITMQ_LOG_BASE="+filepath.Join(b.dir, "log"),
		"RABBITMQ_ENABLED_PLUGINS_FILE="+filepath.Join(b.dir, "enabled_plugins"),
		"RABBITMQ_SERVER_ERL_ARGS=-start_epmd false",
		// The script then execs the VM instead of staying its parent, so
		// Pdeathsig reaches beam itself if the test process dies.
		"RUNNING_UNDER_SYSTEMD=true",
	)
	if err := b.spawn(srv, "rabbitmq.log"); err != nil {
		return err
	}
	return b.waitReady(srv)
}

// distPort is the Erlang distribution port; rabbitmq's default is the
// AMQP port + 20000, which may not exist.
func distPort(p int) int {
	if p+20000 < 65536 {
		return p + 20000
	}
	return p - 20000
}

func (b *Broker) spawn(cmd *exec.Cmd, log string) error {
	f, err := os.OpenFile(filepath.Join(b.dir, log), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd.Stdout, cmd.Stderr = f, f
	// Its own group, so kill reaches beam and its helpers, not just the
	// wrapper script; Pdeathsig so a crashed test leaves nothing behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	b.mu.Lock()
	b.procs = append(b.procs, cmd)
	b.mu.Unlock()
	go func() { _ = cmd.Wait() }()
	return nil
}

// waitReady waits until an AMQP handshake succeeds.
func (b *Broker) waitReady(srv *exec.Cmd) error {
	for deadline := time.Now().Add(readyTimeout); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if srv.ProcessState != nil {
			return fmt.Errorf("rabbitmq-server exited: %s\n%s", srv.ProcessState, testenv.Tail(filepath.Join(b.dir, "rabbitmq.log")))
		}
		if c, err := amqp.Dial(b.URL); err == nil {
			c.Close()
			return nil
		}
	}
	return fmt.Errorf("rabbitmq not ready after %s:\n%s", readyTimeout, testenv.Tail(filepath.Join(b.dir, "rabbitmq.log")))
}

// kill ends every process started, by process group, and waits a moment
// for the port to close.
func (b *Broker) kill() {
	b.mu.Lock()
	procs := b.procs
	b.procs = nil
	b.mu.Unlock()
	for i := len(procs) - 1; i >= 0; i-- {
		if p := procs[i].Process; p != nil {
			_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
		}
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(b.Port), 100*time.Millisecond)
		if err != nil {
			return
		}
		c.Close()
	}
}

// Stop kills the broker (an outage); Restart brings it back on the same
// port. Queues and exchanges are not kept (each start is a fresh node).
func (b *Broker) Stop() { b.kill() }

// Restart starts the broker again on the same ports.
func (b *Broker) Restart() error {
	if err := os.RemoveAll(filepath.Join(b.dir, "mnesia")); err != nil {
		return err
	}
	return b.start()
}

// Publish sends body to exchange with key, declaring the exchange as
// oslo.messaging does (topic, not durable).
func (b *Broker) Publish(ctx context.Context, exchange, key string, body []byte) error {
	return b.PublishAll(ctx, exchange, key, [][]byte{body})
}

// PublishAll sends each of bodies, in order, over one connection: a
// burst as a busy conductor sends it.
func (b *Broker) PublishAll(ctx context.Context, exchange, key string, bodies [][]byte) error {
	c, err := amqp.Dial(b.URL)
	if err != nil {
		return err
	}
	defer c.Close()
	ch, err := c.Channel()
	if err != nil {
		return err
	}
	if err := ch.ExchangeDeclare(exchange, "topic", false, false, false, false, nil); err != nil {
		return err
	}
	for _, body := range bodies {
		if err := ch.PublishWithContext(ctx, exchange, key, false, false, amqp.Publishing{ContentType: "application/json", Body: body}); err != nil {
			return err
		}
	}
	return errors.Join(ch.Close())
}

// Log is the broker's log, for failure messages.
func (b *Broker) Log() string { return testenv.Tail(filepath.Join(b.dir, "rabbitmq.log")) }
