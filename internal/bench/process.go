package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// run is one engine process: its wall time and peak RSS.
type run struct {
	wall time.Duration
	rss  int64 // bytes
}

func runEngine(bin, cfg string) (run, error) {
	start := time.Now()
	cmd := exec.Command(bin, "once", "--config", cfg)
	if out, err := cmd.CombinedOutput(); err != nil {
		return run{}, fmt.Errorf("engine once: %v: %s", err, tail(out))
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return run{time.Since(start), ru.Maxrss * 1024}, nil
}

func tail(b []byte) []byte {
	if len(b) > 2000 {
		return b[len(b)-2000:]
	}
	return b
}

// Process runs the engine binary with the fake Wasm plugin at n nodes:
// a cold run (creates everything; peak RSS), then warm restarts (warm
// compile cache and state file: the time from exec to the end of the
// first cycle, which is the whole run).
func Process(bin, plugin, url string, n int, seed int) ([]Row, error) {
	dir, err := os.MkdirTemp("", "rpbench-engine")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	cfg := filepath.Join(dir, "config.toml")
	text := fmt.Sprintf(`[engine]
id = "bench-process"
state_file = "state.json"
concurrency = 4
[placement]
endpoint = %q
token = "admin"
[plugin]
path = %q
memory_limit = "1GiB"
timeout = "300s"
cache_dir = "cache"
[plugin.config]
nodes = %d
seed = %d
`, url, plugin, n, seed)
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		return nil, err
	}
	cold, err := runEngine(bin, cfg)
	if err != nil {
		return nil, err
	}
	var walls []time.Duration
	var rss int64
	for range 5 {
		r, err := runEngine(bin, cfg)
		if err != nil {
			return nil, err
		}
		walls, rss = append(walls, r.wall), max(rss, r.rss)
	}
	fleet := fmt.Sprintf("%d (fake plugin in Wasm, fake Placement)", n)
	restart := Median(walls)
	peak := max(cold.rss, rss)
	rows := []Row{
		{"peak RSS of `engine once` (cold run creating all, and idle runs)", fleet, fmt.Sprintf("%.0f MB", float64(peak)/1e6),
			"≤ 200 MB at 10k", verdict(n != 10000 || peak <= 200e6)},
		{"restart to end of first cycle, warm compile cache (median of 5 processes)", fleet, ms(restart),
			"≤ 0.5 s", verdict(restart <= 500*time.Millisecond)},
	}
	return rows, nil
}
