//go:build !unix

package main

import "time"

// cpuClock is not measured here (no /proc).
func cpuClock() (time.Duration, bool) { return 0, false }
