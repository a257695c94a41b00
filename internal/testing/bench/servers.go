package bench

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"

	"github.com/rpengine/rpengine/internal/testing/placementfake"
	"github.com/rpengine/rpengine/internal/testing/placementtest"
)

// ServeFake runs the fake Placement for a parent bench process: it prints
// the URL, serves until stdin closes, and offers /_bench/bump?uuid= so the
// parent can play another writer, and /_bench/seed to create providers
// that already carry an owner marker (Child.Seed).
func ServeFake() {
	fake := placementfake.New(placementfake.WithSeed(7))
	mux := http.NewServeMux()
	mux.HandleFunc("/_bench/bump", func(w http.ResponseWriter, r *http.Request) {
		for _, u := range strings.Split(r.URL.Query().Get("uuid"), ",") {
			if err := fake.BumpGeneration(u); err != nil {
				http.Error(w, err.Error(), 404)
				return
			}
		}
	})
	mux.HandleFunc("/_bench/seed", func(w http.ResponseWriter, r *http.Request) {
		if err := seed(fake, r.URL.Query()); err != nil {
			http.Error(w, err.Error(), 400)
		}
	})
	mux.Handle("/", fake)
	srv := httptest.NewServer(mux)
	fmt.Println(srv.URL)
	io.Copy(io.Discard, os.Stdin)
}

// Child is a server process started by the bench.
type Child struct {
	URL  string
	cmd  *exec.Cmd
	stop func()
	once sync.Once
}

// running are the children not yet stopped, for StopAll.
var running struct {
	sync.Mutex
	m map[*Child]bool
}

func started(c *Child) *Child {
	running.Lock()
	defer running.Unlock()
	if running.m == nil {
		running.m = map[*Child]bool{}
	}
	running.m[c] = true
	return c
}

// StopAll stops every child still running: rpbench calls it when it is
// interrupted, so that no Placement, uWSGI or MariaDB outlives it.
func StopAll() {
	running.Lock()
	cs := make([]*Child, 0, len(running.m))
	for c := range running.m {
		cs = append(cs, c)
	}
	running.Unlock()
	for _, c := range cs {
		c.Stop()
	}
}

// StartFake starts ServeFake in a child process (self re-exec).
func StartFake() (*Child, error) {
	cmd := exec.Command("/proc/self/exe", "fake-placement")
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		return nil, fmt.Errorf("fake placement child: %w", err)
	}
	return started(&Child{URL: strings.TrimSpace(line), cmd: cmd, stop: func() { in.Close(); cmd.Wait() }}), nil
}

// StartReal starts Debian's Placement on port as the tests do
// (placementtest.Launch). root is unused: the launcher finds the
// repository itself.
func StartReal(_ string, port int) (*Child, error) {
	dir, err := os.MkdirTemp("", "rpbench-placement")
	if err != nil {
		return nil, err
	}
	p, err := placementtest.Launch(dir, port)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start real placement: %w", err)
	}
	return started(&Child{URL: p.URL, stop: func() { p.Stop(); os.RemoveAll(dir) }}), nil
}

// Stop ends the child; a second Stop does nothing.
func (c *Child) Stop() {
	c.once.Do(func() {
		running.Lock()
		delete(running.m, c)
		running.Unlock()
		c.stop()
	})
}

// Bump asks the fake child to change the generation of these providers.
func (c *Child) Bump(uuids []string) error {
	resp, err := http.Get(c.URL + "/_bench/bump?uuid=" + strings.Join(uuids, ","))
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("bump: %s", resp.Status)
	}
	return nil
}
