//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cpuClock is the CPU time (user+sys) of this process and of the plugin
// host processes it runs (children running this same binary; not vcsim),
// read from /proc: a figure the machine's load does not move, unlike the
// wall time. ok is false where /proc is missing.
func cpuClock() (d time.Duration, ok bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	d = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	self, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0, false
	}
	lists, _ := filepath.Glob("/proc/self/task/*/children")
	for _, l := range lists {
		b, _ := os.ReadFile(l)
		for _, pid := range strings.Fields(string(b)) {
			if exe, _ := os.Readlink("/proc/" + pid + "/exe"); exe == self {
				d += childCPU(pid)
			}
		}
	}
	return d, true
}

// childCPU is utime+stime of /proc/PID/stat (clock ticks of 10 ms).
func childCPU(pid string) time.Duration {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // the name may hold spaces
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+st) * 10 * time.Millisecond
}
