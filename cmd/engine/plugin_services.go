package main

import (
	"sort"
	"strings"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/config"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// serviceList prints what a plugin declares it calls: "not declared" for
// an older plugin, "none", or each name with its catalog type.
func serviceList(s []hostabi.Service) string {
	if s == nil {
		return "not declared"
	}
	if len(s) == 0 {
		return "none"
	}
	parts := make([]string, len(s))
	for i, svc := range s {
		parts[i] = svc.Name
		if svc.Type != "" {
			parts[i] += " (type " + svc.Type + ")"
		}
	}
	return strings.Join(parts, ", ")
}

// checkServices reports the declared services against the grants. The
// load has already refused a plugin missing one; what is left to say is
// which grants the plugin does not declare (harmless, but likely a typo).
func checkServices(info wasmhost.Info, cfg *config.Config, v validation) {
	if info.Services == nil {
		v.note("plugin %q does not declare its services: grants not checked", info.Name)
		return
	}
	v.ok("plugin services: %s; all granted", serviceList(info.Services))
	declared := map[string]bool{}
	for _, s := range info.Services {
		declared[s.Name] = true
	}
	var extra []string
	for name := range cfg.Plugin.Services {
		if !declared[name] {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	for _, name := range extra {
		v.note("plugin.services.%s is granted, but the plugin does not declare it (a typo?)", name)
	}
}
