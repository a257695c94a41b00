package novatest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/testing/testenv"
)

// python is Debian's interpreter, the one python3-nova is installed for.
const python = "/usr/bin/python3"

// answerTimeout bounds one command: a periodic over a few dozen nodes
// takes seconds, start-up (imports, databases) up to a few minutes on a
// loaded machine, more the first time (the schema template).
const answerTimeout = 10 * time.Minute

// Options change nova's configuration.
type Options struct {
	// SkipReserveInUse sets [workarounds] skip_reserve_in_use_ironic_nodes.
	SkipReserveInUse bool
	// ExtraConf is a nova.conf read after nova's own (its options win):
	// the lines an operator adds, e.g. what `engine nova-config` prints.
	ExtraConf string
	// OwnerNova makes nova 26 report OWNER_NOVA on every provider, as
	// nova 34 does (ResourceTracker._get_traits).
	OwnerNova bool
}

// Nova is one running nova-compute reporting path.
type Nova struct {
	Dir  string // state: databases, nova.conf, provider_config/, nova.log
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Scanner
	done chan struct{}
	once sync.Once
}

// Start starts nova on dir (created if missing; a directory used before
// keeps nova's databases, so starting again is a restart) and waits until
// it is ready. It is stopped when the test ends.
func Start(t testing.TB, dir, ironicURL, placementURL string, o Options) *Nova {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: not running nova")
	}
	requireInstalled(t)
	script, err := testenv.RepoFile("scripts/nova/driver.py")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{script, dir, ironicURL, placementURL}
	if o.SkipReserveInUse {
		args = append(args, "--skip-reserve-in-use")
	}
	if o.ExtraConf != "" {
		args = append(args, "--extra-conf", o.ExtraConf)
	}
	if o.OwnerNova {
		args = append(args, "--owner-nova")
	}
	cmd := exec.Command(python, args...)
	cmd.Env = testenv.PythonEnv()
	errLog, err := os.OpenFile(filepath.Join(dir, "driver.err"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer errLog.Close()
	cmd.Stderr = errLog
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	n := &Nova{Dir: dir, cmd: cmd, in: in, out: bufio.NewScanner(out), done: make(chan struct{})}
	n.out.Buffer(make([]byte, 64<<10), 1<<20)
	go func() { _ = cmd.Wait(); close(n.done) }()
	t.Cleanup(n.Stop)
	if _, err := n.answer(); err != nil {
		t.Fatalf("start nova: %v", err)
	}
	return n
}

// ProviderConfigDir is nova's [compute] provider_config_location.
func ProviderConfigDir(dir string) string { return filepath.Join(dir, "provider_config") }

// Periodic runs ComputeManager.update_available_resource once; startup
// as the first one after a (re)start does. Returns its duration.
func (n *Nova) Periodic(t testing.TB, startup bool) time.Duration {
	t.Helper()
	a := n.do(t, map[string]any{"op": "periodic", "startup": startup})
	return time.Duration(a.Seconds * float64(time.Second))
}

// PeriodicCost is Periodic with the CPU time nova's process spent in it
// (user+system, threads included), for the bench.
func (n *Nova) PeriodicCost(t testing.TB, startup bool) (wall, cpu time.Duration) {
	t.Helper()
	a := n.do(t, map[string]any{"op": "periodic", "startup": startup})
	return time.Duration(a.Seconds * float64(time.Second)), time.Duration(a.CPUSeconds * float64(time.Second))
}

// RefreshDue makes the next periodic refresh every provider's
// associations (traits, aggregates, inventory) from Placement, as
// [compute] resource_provider_association_refresh (300 s) does.
func (n *Nova) RefreshDue(t testing.TB) { n.do(t, map[string]any{"op": "refresh_due"}) }

// AddInstance records an instance on this host and node, as nova's
// conductor does when it builds one.
func (n *Nova) AddInstance(t testing.TB, uuid, node string) {
	n.do(t, map[string]any{"op": "instance", "uuid": uuid, "node": node})
}

// Stop ends the process (a nova-compute stop); safe to call twice.
func (n *Nova) Stop() {
	n.once.Do(func() {
		_, _ = io.WriteString(n.in, `{"op": "quit"}`+"\n")
		n.in.Close()
		select {
		case <-n.done:
		case <-time.After(30 * time.Second):
			_ = n.cmd.Process.Kill()
			<-n.done
		}
	})
}

type answer struct {
	OK         bool    `json:"ok"`
	Error      string  `json:"error"`
	Seconds    float64 `json:"seconds"`
	CPUSeconds float64 `json:"cpu_seconds"`
}

func (n *Nova) do(t testing.TB, cmd map[string]any) answer {
	t.Helper()
	b, _ := json.Marshal(cmd)
	if _, err := n.in.Write(append(b, '\n')); err != nil {
		t.Fatalf("nova %v: %v; log:\n%s", cmd["op"], err, n.logTail())
	}
	a, err := n.answer()
	if err != nil {
		t.Fatalf("nova %v: %v", cmd["op"], err)
	}
	return a
}

func (n *Nova) answer() (answer, error) {
	got := make(chan bool, 1)
	go func() { got <- n.out.Scan() }()
	select {
	case ok := <-got:
		if !ok {
			return answer{}, fmt.Errorf("nova exited; log:\n%s", n.logTail())
		}
	case <-time.After(answerTimeout):
		_ = n.cmd.Process.Kill()
		return answer{}, fmt.Errorf("no answer after %s; log:\n%s", answerTimeout, n.logTail())
	}
	var a answer
	if err := json.Unmarshal(n.out.Bytes(), &a); err != nil {
		return a, fmt.Errorf("bad answer %q", n.out.Text())
	}
	if !a.OK {
		return a, fmt.Errorf("%s; log:\n%s", a.Error, n.logTail())
	}
	return a, nil
}

// Errors returns the ERROR lines of nova's log: a periodic that failed for
// a node logs there and carries on, as nova-compute does.
func (n *Nova) Errors() []string {
	b, _ := os.ReadFile(filepath.Join(n.Dir, "nova.log"))
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, " ERROR ") && !strings.Contains(l, "ERROR nova.compute.manager  ") {
			out = append(out, l)
		}
	}
	return out
}

func (n *Nova) logTail() string {
	return testenv.Tail(filepath.Join(n.Dir, "driver.err")) + "\n" + testenv.Tail(filepath.Join(n.Dir, "nova.log"))
}

var installed struct {
	once sync.Once
	why  string
}

func requireInstalled(t testing.TB) {
	t.Helper()
	installed.once.Do(func() {
		out, err := exec.Command(python, "-c", "import nova.virt.ironic.driver, ironicclient").CombinedOutput()
		if err != nil {
			installed.why = fmt.Sprintf("nova not installed (%s: %v: %s); run scripts/nova/install.sh",
				python, err, strings.TrimSpace(string(out)))
		}
	})
	if installed.why != "" {
		testenv.Unavailable(t, installed.why)
	}
}
