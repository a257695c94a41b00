package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// FirstStart measures a plugin's first load after an install (an empty
// compilation cache: the host compiles it) and after `engine plugin
// compile` filled the cache, as `engine plugin inspect` (load,
// instantiate, describe) in a process of its own.
func FirstStart(bin string, plugins []string) ([]Row, error) {
	var rows []Row
	for _, p := range plugins {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		dir, err := os.MkdirTemp("", "rpbench-cache")
		if err != nil {
			return nil, err
		}
		env := []string{"XDG_CACHE_HOME=" + dir}
		cold, err := measured(env, bin, "plugin", "inspect", p)
		if err == nil {
			os.RemoveAll(filepath.Join(dir, "rpengine"))
			_, err = measured(env, bin, "plugin", "compile", p)
		}
		var warm []timing
		for i := 0; err == nil && i < 3; i++ {
			var t timing
			t, err = measured(env, bin, "plugin", "inspect", p)
			warm = append(warm, t)
		}
		os.RemoveAll(dir)
		if err != nil {
			return nil, err
		}
		var walls, cpus []float64
		for _, t := range warm {
			walls, cpus = append(walls, msOf(t.wall)), append(cpus, msOf(t.cpu))
		}
		// The verdict is on CPU: on 2 shared cores the wall time is the
		// machine's load as much as the start's.
		c := SpreadOf(cpus)
		rows = append(rows, Row{"first start of the plugin after an install: `engine plugin inspect`, CPU ms (wall ms)",
			filepath.Base(p), fmt.Sprintf("empty cache %.0f (%.0f); after `engine plugin compile` %s (%s), min / median / max of 3",
				msOf(cold.cpu), msOf(cold.wall), c.Format("%.0f"), SpreadOf(walls).Format("%.0f")), "≤ 1000 ms CPU after compile", verdict(c.Med <= 1000)})
	}
	return rows, nil
}

type timing struct{ wall, cpu time.Duration }

// measured runs a command through RunMeasured with env added.
func measured(env []string, args ...string) (timing, error) {
	cmd := exec.Command("/proc/self/exe", append([]string{"run-measured"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		return timing{}, fmt.Errorf("%v: %v", args, err)
	}
	var wall, rss, cpu int64
	if _, err := fmt.Sscan(string(out), &wall, &rss, &cpu); err != nil {
		return timing{}, fmt.Errorf("run-measured answered %q: %v", out, err)
	}
	return timing{time.Duration(wall), time.Duration(cpu)}, nil
}
