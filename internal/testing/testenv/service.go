package testenv

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// ErrExited means a service died before it was ready, typically because
// another process took its free port in between: callers try again.
var ErrExited = errors.New("exited before it was ready")

// Service is one real service process started for a test.
type Service struct {
	URL    string
	Log    string // path of its stdout and stderr
	cmd    *exec.Cmd
	exited chan struct{}
	grace  time.Duration
}

// Launch starts cmd with its output in logPath and waits up to timeout
// until ready answers true for url. On Stop the process gets SIGTERM and
// grace to exit before it is killed (grace 0: killed at once).
func Launch(cmd *exec.Cmd, logPath, url string, ready func(hc *http.Client, url string) bool, timeout, grace time.Duration) (*Service, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child keeps its own descriptor
	cmd.Stdout, cmd.Stderr = logFile, logFile
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Service{URL: url, Log: logPath, cmd: cmd, exited: make(chan struct{}), grace: grace}
	go func() { _ = cmd.Wait(); close(s.exited) }()
	if err := s.waitReady(ready, timeout); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Service) waitReady(ready func(*http.Client, string) bool, timeout time.Duration) error {
	hc := &http.Client{Timeout: 2 * time.Second}
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		select {
		case <-s.exited:
			return fmt.Errorf("%s %w; log %s:\n%s", s.cmd.Path, ErrExited, s.Log, Tail(s.Log))
		default:
		}
		if ready(hc, s.URL) {
			return nil
		}
	}
	return fmt.Errorf("%s not ready after %s; log %s:\n%s", s.cmd.Path, timeout, s.Log, Tail(s.Log))
}

// Stop ends the process and waits for it.
func (s *Service) Stop() {
	if s.grace > 0 {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
			return
		case <-time.After(s.grace):
		}
	}
	_ = s.cmd.Process.Kill()
	<-s.exited
}

// GetOK reports whether GET url answers 200, with the given headers.
func GetOK(hc *http.Client, url string, header ...string) bool {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		return false
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := hc.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// FreePort returns a loopback port free at the time of the call.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// PythonEnv is the environment without the variables that would point
// Debian's python at another interpreter's modules, plus extra.
func PythonEnv(extra ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PYTHONPATH=") && !strings.HasPrefix(kv, "PYTHONHOME=") {
			out = append(out, kv)
		}
	}
	return append(out, extra...)
}

// Tail is the end of a log file, for error messages.
func Tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}
