package config

import (
	"fmt"
	"strings"

	"github.com/rpengine/rpengine/internal/memlimit"
)

// SoftLimit is engine.memory_limit: "auto" (from the cgroup's limit, else
// memlimit.Default), "none", or a size; the engine's Go soft memory limit
// (docs/CONFIGURATION.md, "Memory").
type SoftLimit int64

// UnmarshalText parses "auto", "none" or a size of at least 16MiB.
func (l *SoftLimit) UnmarshalText(b []byte) error {
	switch strings.TrimSpace(string(b)) {
	case "auto":
		*l = SoftLimit(memlimit.Auto)
		return nil
	case "none":
		*l = SoftLimit(memlimit.None)
		return nil
	}
	var s Size
	if err := s.UnmarshalText(b); err != nil {
		return fmt.Errorf("bad memory limit %q (want \"auto\", \"none\" or a size such as \"512MiB\")", b)
	}
	if s < 16<<20 || s > 1<<50 {
		return fmt.Errorf("bad memory limit %q: a size must be at least 16MiB", b)
	}
	*l = SoftLimit(s)
	return nil
}
