package etcdtest

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/testing/testenv"
)

// EnvRequire set to "1" turns "etcd is not installed" into a failure.
const EnvRequire = testenv.EnvRequire

// Start runs an etcd on free loopback ports with a data dir in memory (dataDir)
// and returns its client URL; it is stopped when the test ends. Its
// election timeout is short (500 ms), which lets etcd grant 1 s leases.
func Start(t testing.TB) string {
	t.Helper()
	return start(t, nil)
}

func start(t testing.TB, sec *Secure) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: not starting etcd")
	}
	bin, err := exec.LookPath("etcd")
	if err != nil {
		testenv.Unavailable(t, "etcd not installed (run scripts/etcd/install.sh)")
	}
	dir := dataDir(t)
	var errs []error
	for try := 0; ; try++ {
		url, stop, err := launch(bin, dir, try, sec)
		if err == nil {
			t.Cleanup(stop)
			return url
		}
		errs = append(errs, fmt.Errorf("try %d: %w", try+1, err))
		if try == 2 {
			t.Fatalf("start etcd: %v", errors.Join(errs...))
		}
	}
}

func launch(bin, dir string, try int, sec *Secure) (string, func(), error) {
	client, peer := freePort(), freePort()
	if client == 0 || peer == 0 {
		return "", nil, errors.New("no free port")
	}
	curl := sec.scheme() + "://127.0.0.1:" + strconv.Itoa(client)
	purl := "http://127.0.0.1:" + strconv.Itoa(peer)
	logPath := filepath.Join(dir, fmt.Sprintf("etcd-%d.log", try))
	logFile, err := os.Create(logPath)
	if err != nil {
		return "", nil, err
	}
	defer logFile.Close()
	cmd := exec.Command(bin, "--name", "test", "--data-dir", filepath.Join(dir, fmt.Sprintf("data-%d", try)),
		"--listen-client-urls", curl, "--advertise-client-urls", curl,
		"--listen-peer-urls", purl, "--initial-advertise-peer-urls", purl,
		"--initial-cluster", "test="+purl, "--heartbeat-interval", "100", "--election-timeout", "500",
		"--logger", "zap", "--log-outputs", "stderr", "--log-level", "warn")
	cmd.Args = append(cmd.Args, sec.flags()...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Killed with the test binary even if it dies without cleanups.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	hc := &http.Client{Timeout: time.Second, Transport: sec.transport()}
	last := "no answer"
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		select {
		case <-exited:
			return "", nil, fmt.Errorf("etcd exited before it was ready; its log ends:\n%s", testenv.Tail(logPath))
		default:
		}
		resp, err := hc.Get(curl + "/health")
		if err != nil {
			last = err.Error()
			continue
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return curl, stop, nil
		}
		last = fmt.Sprintf("%s %s", resp.Status, body)
	}
	stop()
	return "", nil, fmt.Errorf("etcd not ready after 20s (last /health: %s); log %s ends:\n%s", last, logPath, testenv.Tail(logPath))
}

// dataDir is on /dev/shm when it can be: etcd fsyncs every commit, and
// on a disk busy with other tests a commit can outlast the 250 ms a 1 s
// lease allows a renewal, which ends an engine's claims at random.
func dataDir(t testing.TB) string {
	dir, err := os.MkdirTemp("/dev/shm", "etcdtest-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
