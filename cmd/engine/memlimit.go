package main

import (
	"log/slog"

	"github.com/rpengine/rpengine/internal/config"
	"github.com/rpengine/rpengine/internal/memlimit"
)

// setMemoryLimit gives the Go runtime a soft memory limit below the
// cgroup's, less the plugin's cap (docs/CONFIGURATION.md, "Memory").
func setMemoryLimit(cfg *config.Config, log *slog.Logger) {
	r := memlimit.Apply(int64(cfg.Plugin.MemoryLimit))
	switch {
	case r.Limit > 0:
		log.Info("soft memory limit set below the cgroup's", "limit_mib", r.Limit>>20, "cgroup_mib", r.Cgroup>>20)
	case r.Cgroup > 0:
		log.Warn("no soft memory limit: "+r.Why, "cgroup_mib", r.Cgroup>>20)
	}
}
