package main

import (
	"log/slog"

	"github.com/rpengine/rpengine/internal/config"
	"github.com/rpengine/rpengine/internal/memlimit"
)

// setMemoryLimit gives the Go runtime the soft memory limit of
// engine.memory_limit: by default below the cgroup's, less the plugin's
// cap, or memlimit.Default outside one (docs/CONFIGURATION.md, "Memory").
func setMemoryLimit(cfg *config.Config, log *slog.Logger) {
	r := memlimit.Apply(int64(cfg.Engine.MemoryLimit), int64(cfg.Plugin.MemoryLimit))
	switch {
	case r.Limit > 0:
		log.Info("soft memory limit set", "limit_mib", r.Limit>>20, "from", r.From, "cgroup_mib", r.Cgroup>>20)
	case r.Cgroup > 0:
		log.Warn("no soft memory limit: "+r.Why, "cgroup_mib", r.Cgroup>>20)
	}
}
