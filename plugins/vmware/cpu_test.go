//go:build !wasip1

package main

import (
	"slices"
	"time"
)

// cpuTimes collects the CPU time of each run of a variant.
type cpuTimes map[string][]time.Duration

// wrap times run's CPU under name.
func (c cpuTimes) wrap(name string, run func()) func() {
	return func() {
		start, ok := cpuClock()
		run()
		if end, ok2 := cpuClock(); ok && ok2 {
			c[name] = append(c[name], end-start)
		}
	}
}

func (c cpuTimes) median(name string) float64 {
	s := slices.Clone(c[name])
	if len(s) == 0 {
		return 0
	}
	slices.Sort(s)
	return float64(s[len(s)/2]) / 1e6
}
