package bench

import (
	"bytes"
	"errors"
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

// runEngine runs `engine once` through a small child of rpbench
// (RunMeasured): a process started from a large one inherits that
// process's peak RSS in its own maxrss (Linux keeps the high-water mark
// across exec, and Go starts children sharing the parent's memory), so
// the engine must be started from a process that stays small.
func runEngine(bin, cfg string) (run, error) {
	cmd := exec.Command("/proc/self/exe", "run-measured", bin, "once", "--config", cfg)
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return run{}, fmt.Errorf("engine once: %v: %s", err, tail(ee.Stderr))
		}
		return run{}, fmt.Errorf("engine once: %v", err)
	}
	var r run
	var wallNS int64
	if _, err := fmt.Sscan(string(out), &wallNS, &r.rss); err != nil {
		return run{}, fmt.Errorf("run-measured answered %q: %v", out, err)
	}
	r.wall = time.Duration(wallNS)
	return r, nil
}

// RunMeasured is rpbench's run-measured subcommand: it runs args and
// prints their wall time in nanoseconds, peak RSS in bytes (the largest
// of the process and the children it waited for) and CPU (user+system,
// theirs and their children's) in nanoseconds.
func RunMeasured(args []string) {
	start := time.Now()
	cmd := exec.Command(args[0], args[1:]...)
	var errs bytes.Buffer
	cmd.Stderr, cmd.Stdout = &errs, &errs
	if err := cmd.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "%v: %s", err, tail(errs.Bytes()))
		os.Exit(1)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	fmt.Println(time.Since(start).Nanoseconds(), ru.Maxrss*1024, ru.Utime.Nano()+ru.Stime.Nano())
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
	config := func(nodes int) string { return processConfig(url, plugin, nodes, seed) }
	if err := os.WriteFile(cfg, []byte(config(n)), 0o644); err != nil {
		return nil, err
	}
	cold, err := runEngine(bin, cfg)
	if err != nil {
		return nil, err
	}
	var walls []float64
	var rss int64
	for range 5 {
		r, err := runEngine(bin, cfg)
		if err != nil {
			return nil, err
		}
		walls, rss = append(walls, msOf(r.wall)), max(rss, r.rss)
	}
	// Then every node is gone at the source: n unlisted providers, the
	// plugin's first proof of each (pending, nothing deleted).
	if err := os.WriteFile(cfg, []byte(config(0)), 0o644); err != nil {
		return nil, err
	}
	gone, err := runEngine(bin, cfg)
	if err != nil {
		return nil, err
	}
	fleet := fmt.Sprintf("%d (fake plugin in Wasm, fake Placement)", n)
	restart := SpreadOf(walls)
	coldMB, warmMB := float64(cold.rss)/1e6, float64(rss)/1e6
	rssGoal, restartGoal := processGoals(n)
	return []Row{
		{"peak RSS of `engine once`, MB: the cold run creating every provider", fleet, fmt.Sprintf("%.0f", coldMB),
			goalText(rssGoal, " MB"), goalMet(rssGoal, coldMB)},
		{"peak RSS of `engine once`, MB: warm restarts, nothing to write (max of 5)", fleet, fmt.Sprintf("%.0f", warmMB),
			goalText(rssGoal, " MB"), goalMet(rssGoal, warmMB)},
		{"restart to end of first cycle, warm compile cache, ms (min / median / max of 5 processes)", fleet, restart.Format("%.0f"),
			goalText(restartGoal, " ms"), goalMet(restartGoal, restart.Med)},
		{"unlisted providers: peak RSS of `engine once`, MB: every node gone at the source (all providers unlisted, the plugin's first proof; in brackets, how long it ran)", fleet,
			fmt.Sprintf("%.0f (%.1f s)", float64(gone.rss)/1e6, gone.wall.Seconds()), goalText(rssGoal, " MB"), goalMet(rssGoal, float64(gone.rss)/1e6)},
	}, nil
}

// processConfig is the engine's config of Process at nodes.
func processConfig(url, plugin string, nodes, seed int) string {
	return fmt.Sprintf(`[engine]
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
`, url, plugin, nodes, seed)
}

// processGoals are the ceilings on peak RSS (MB) and restart time (ms)
// at n nodes (the first round's and the 100,000-node ones); 0 means none.
func processGoals(n int) (rssMB, restartMS float64) {
	switch {
	case n >= 100000:
		return 200, 1500
	case n >= 10000:
		return 200, 500
	}
	return 0, 500
}

func goalText(goal float64, unit string) string {
	if goal == 0 {
		return ""
	}
	return fmt.Sprintf("≤ %.0f%s", goal, unit)
}

func goalMet(goal, v float64) string {
	if goal == 0 {
		return ""
	}
	return verdict(v <= goal)
}
