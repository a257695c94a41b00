package vcsimtest

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/testing/testenv"
)

// EnvBinary names the vcsim binary; otherwise it is looked up in the
// install script's cache dir.
const EnvBinary = "RPENGINE_VCSIM"

// User and Password are the simulator's only valid login.
const (
	User     = "rpengine"
	Password = "vcsim-secret-pw"
)

// Model sizes the simulated inventory (vcsim's flags).
type Model struct {
	Datacenters, Clusters, Hosts, Datastores int
	// StartTimeout bounds vcsim's start (default 60 s; a model of
	// thousands of hosts takes minutes on a loaded machine).
	StartTimeout time.Duration
}

// Sim is one running simulator.
type Sim struct {
	URL   string // http://127.0.0.1:PORT, the base; SOAP is at /sdk
	model Model
	dir   string
	proc  *testenv.Service
	t     testing.TB
}

// Start runs vcsim with model on a free loopback port, plain HTTP, with
// one user and password. It is killed when the test ends.
func Start(t testing.TB, model Model) *Sim {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: not starting vcsim")
	}
	bin, err := Binary()
	if err != nil {
		testenv.Unavailable(t, err.Error())
	}
	s := &Sim{model: model, dir: t.TempDir(), t: t}
	if err := s.launch(bin, 0); err != nil {
		t.Fatalf("start vcsim: %v", err)
	}
	t.Cleanup(func() { s.proc.Stop() })
	return s
}

// Restart stops the simulator and starts it again on the same port with
// the same model: every session is gone, the inventory is the model's.
func (s *Sim) Restart() { s.t.Helper(); s.RestartWith(s.model) }

// RestartWith restarts the simulator with another model. vcsim builds its
// inventory in order, so a model with fewer clusters has the same objects
// (the same references) minus the last clusters: the way to make a
// cluster disappear, since vcsim implements no Destroy for clusters.
func (s *Sim) RestartWith(m Model) {
	s.t.Helper()
	s.model = m
	s.proc.Stop()
	port, _ := strconv.Atoi(s.URL[strings.LastIndex(s.URL, ":")+1:])
	bin, _ := Binary()
	var err error
	for range 20 { // the port may linger for a moment
		if err = s.launch(bin, port); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.t.Fatalf("restart vcsim: %v", err)
}

func (s *Sim) launch(bin string, port int) error {
	var err error
	for range 3 {
		p := port
		if p == 0 {
			if p, err = testenv.FreePort(); err != nil {
				return err
			}
		}
		m := s.model
		cmd := exec.Command(bin, "-l", "127.0.0.1:"+strconv.Itoa(p), "-tls=false",
			"-username", User, "-password", Password,
			"-dc", strconv.Itoa(max(m.Datacenters, 1)), "-cluster", strconv.Itoa(m.Clusters),
			"-host", strconv.Itoa(m.Hosts), "-ds", strconv.Itoa(m.Datastores),
			"-standalone-host", "0", "-pg", "0", "-vm", "0", "-E", os.DevNull)
		cmd.Env = []string{"HOME=" + s.dir, "PATH=/usr/bin:/bin"}
		url := "http://127.0.0.1:" + strconv.Itoa(p)
		ready := func(hc *http.Client, u string) bool {
			resp, err := hc.Get(u + "/about")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == 200
		}
		log := filepath.Join(s.dir, "vcsim-"+strconv.Itoa(p)+".log")
		timeout := m.StartTimeout
		if timeout == 0 {
			timeout = 60 * time.Second
		}
		s.proc, err = testenv.Launch(cmd, log, url, ready, timeout, 0)
		if err == nil {
			s.URL = url
			return nil
		}
		if !errors.Is(err, testenv.ErrExited) || port != 0 {
			return err
		}
	}
	return err
}

// Binary finds vcsim: $RPENGINE_VCSIM, or the install script's cache dir
// for the govmomi version in go.mod.
func Binary() (string, error) {
	if b := os.Getenv(EnvBinary); b != "" {
		return b, nil
	}
	version, err := govmomiVersion()
	if err != nil {
		return "", err
	}
	cache := os.Getenv("RPENGINE_VCSIM_DIR")
	if cache == "" {
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			home, _ := os.UserHomeDir()
			base = filepath.Join(home, ".cache")
		}
		cache = filepath.Join(base, "rpengine", "vcsim-"+version)
	}
	bin := filepath.Join(cache, "vcsim")
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("vcsim %s not built (%v): run scripts/vcsim/install.sh", version, err)
	}
	return bin, nil
}

// govmomiVersion reads the required govmomi version from go.mod.
func govmomiVersion() (string, error) {
	mod, err := testenv.RepoFile("go.mod")
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(mod)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "github.com/vmware/govmomi" {
			return f[1], nil
		}
		if len(f) >= 3 && f[0] == "require" && f[1] == "github.com/vmware/govmomi" {
			return f[2], nil
		}
	}
	return "", errors.New("go.mod does not require github.com/vmware/govmomi")
}
