package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/testing/guesttest"
)

// CPU time, beside the wall time guesttest.Compare reports: on a machine
// other jobs load, the wall time of a call that crosses two processes
// stretches with every wake-up, its CPU time much less. cpuTime is the
// time on CPU of this process and its children (the plugin host), all
// threads, from Linux's schedstat (nanoseconds); 0 elsewhere.
func cpuTime() time.Duration {
	total := taskTime(os.Getpid())
	for _, pid := range children {
		t := taskTime(pid)
		if t == 0 { // gone: look again (a scan of /proc costs milliseconds)
			findChildren()
			return cpuTime()
		}
		total += t
	}
	return total
}

// children are the pids of this process's children, as last found.
var children []int

func findChildren() {
	self := os.Getpid()
	children = children[:0]
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == self {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat")); err == nil && parentOf(stat) == self {
			children = append(children, pid)
		}
	}
}

// parentOf reads the ppid of a /proc/PID/stat line (after the command,
// which may hold spaces, in parentheses).
func parentOf(stat []byte) int {
	s := string(stat)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

func taskTime(pid int) time.Duration {
	tasks, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "schedstat"))
	var ns int64
	for _, t := range tasks {
		if b, err := os.ReadFile(t); err == nil {
			f := strings.Fields(string(b))
			if len(f) > 0 {
				v, _ := strconv.ParseInt(f[0], 10, 64)
				ns += v
			}
		}
	}
	return time.Duration(ns)
}

// withCPU wraps each variant to record its CPU time per call (the first
// call, Compare's warm-up, left out); report then adds NAME-cpu-ms
// medians and the CPU ratios of ratios.
func withCPU(vs []guesttest.Variant) (wrapped []guesttest.Variant, report func(*testing.B, []guesttest.Ratio)) {
	got := map[string][]time.Duration{}
	findChildren() // the plugins are loaded: their hosts run
	for _, v := range vs {
		calls := 0
		wrapped = append(wrapped, guesttest.Variant{Name: v.Name, Run: func(tb testing.TB) {
			start := cpuTime()
			v.Run(tb)
			if calls++; calls > 1 {
				got[v.Name] = append(got[v.Name], cpuTime()-start)
			}
		}})
	}
	return wrapped, func(b *testing.B, ratios []guesttest.Ratio) {
		med := map[string]float64{}
		for name, ds := range got {
			slices.Sort(ds)
			med[name] = float64(ds[len(ds)/2])
			b.ReportMetric(med[name]/1e6, strings.ReplaceAll(name, " ", "_")+"-cpu-ms")
		}
		for _, r := range ratios {
			if med[r.Den] > 0 {
				b.ReportMetric(med[r.Num]/med[r.Den], r.Name+"-cpu")
			}
		}
	}
}
