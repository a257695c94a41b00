package etcdtest

import (
	"errors"
	"fmt"
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

// Start runs an etcd on free loopback ports with a data dir in t.TempDir()
// and returns its client URL; it is stopped when the test ends. Its
// election timeout is short (500 ms), which lets etcd grant 1 s leases.
func Start(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: not starting etcd")
	}
	bin, err := exec.LookPath("etcd")
	if err != nil {
		testenv.Unavailable(t, "etcd not installed (run scripts/etcd/install.sh)")
	}
	dir := t.TempDir()
	for try := 0; ; try++ {
		url, stop, err := launch(bin, dir, try)
		if err == nil {
			t.Cleanup(stop)
			return url
		}
		if try == 2 {
			t.Fatalf("start etcd: %v", err)
		}
	}
}

func launch(bin, dir string, try int) (string, func(), error) {
	client, peer := freePort(), freePort()
	if client == 0 || peer == 0 {
		return "", nil, errors.New("no free port")
	}
	curl := "http://127.0.0.1:" + strconv.Itoa(client)
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
	hc := &http.Client{Timeout: time.Second}
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		select {
		case <-exited:
			b, _ := os.ReadFile(logPath)
			return "", nil, fmt.Errorf("etcd exited before it was ready:\n%s", b)
		default:
		}
		if resp, err := hc.Get(curl + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return curl, stop, nil
			}
		}
	}
	stop()
	return "", nil, fmt.Errorf("etcd not ready after 20s; log %s", logPath)
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
