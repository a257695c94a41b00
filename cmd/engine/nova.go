package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"slices"
	"strings"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/internal/config"
)

// The beside-nova verbs join the list before "plugin" (cli.go).
func init() {
	i := slices.IndexFunc(verbs, func(v verb) bool { return v.name == "plugin" })
	verbs = slices.Insert(verbs, i,
		verb{name: "nova-config", synopsis: "--config FILE",
			summary: "print the nova.conf lines and provider-config YAML to run beside nova-compute",
			example: "engine nova-config --config /etc/rpengine/rpengine.toml",
			flags:   []string{"config", "log-format"},
			run: func(ctx context.Context, a args, out io.Writer, log *slog.Logger) error {
				return cmdNovaConfig(ctx, a.config, out, log)
			}},
		verb{name: "nova-standdown", synopsis: "--config FILE",
			summary: "release this engine's holds, handing the providers back to nova-compute alone",
			example: "engine nova-standdown --config /etc/rpengine/rpengine.toml",
			flags:   []string{"config"},
			run: func(ctx context.Context, a args, out io.Writer, log *slog.Logger) error {
				return cmdNovaStandDown(ctx, a.config, out, log)
			}})
}

// beside is the engine's beside-nova setting from cfg (docs/NOVA.md).
func beside(cfg *config.Config) engine.Beside {
	project, user := cfg.HoldIDs()
	return engine.Beside{Enabled: cfg.Nova.Beside, SkipReserveInUse: cfg.Nova.SkipReserveInUse,
		HoldProject: project, HoldUser: user}
}

// novaSignature is a trait nova-compute's Ironic driver puts on every
// provider it writes (IronicDriver.capabilities supports_attach_interface,
// mapped by nova/virt/driver.py CAPABILITY_TRAITS_MAP and added by
// ResourceTracker._get_traits); this engine never writes it.
const novaSignature = "COMPUTE_NET_ATTACH_INTERFACE"

// cmdNovaConfig prints the nova.conf settings and the provider-config YAML
// that let nova-compute and this engine share providers without a fight.
// When the scope is one conductor group, the nova-compute with that
// partition_key serves exactly the engine's nodes, so $COMPUTE_NODE names
// them all, enrolled later or not. Any other scope ([scope] shards,
// several groups, [coord]) would make $COMPUTE_NODE mark nodes the engine
// does not manage, so the nodes in scope are listed through the plugin and
// named one by one (stale at the next enrolment: validate says so).
func cmdNovaConfig(ctx context.Context, path string, out io.Writer, log *slog.Logger) error {
	cfg, err := loadConfig(path)
	if err != nil {
		return err
	}
	if group, ok := novaPartition(cfg); ok && len(cfg.Nova.ComputeHosts) == 0 {
		return fmt.Errorf("[scope] conductor_groups = [%q] is nova's [ironic] partition_key, which nova refuses without "+
			"[ironic] peer_list: set [nova] compute_hosts to the host names of the nova-computes serving that group", group)
	}
	var nodes []string
	if _, ok := novaPartition(cfg); scoped(cfg) && !ok {
		if nodes, err = nodesInScope(ctx, cfg, log); err != nil {
			return err
		}
	}
	fmt.Fprint(out, novaConfigText(cfg, nodes))
	return nil
}

// novaPartition returns the engine's one conductor group when that is its
// whole scope (or, with a fleet marker, its fleet's): what a
// nova-compute's partition_key serves.
func novaPartition(cfg *config.Config) (string, bool) {
	divided := cfg.Coord.Partitions > 0 && !cfg.FleetMarker() || len(cfg.Coord.Shards) > 0
	if len(cfg.Scope.ConductorGroups) != 1 || len(cfg.Scope.Shards) > 0 || divided {
		return "", false
	}
	return cfg.Scope.ConductorGroups[0], true
}

// scoped says whether the nodes the provider config marks are fewer than
// a nova-compute's: with a fleet marker, partitions divide the fleet
// among engines, not the marked nodes.
func scoped(cfg *config.Config) bool {
	divided := cfg.Coord.Partitions > 0 && !cfg.FleetMarker() || len(cfg.Coord.Shards) > 0
	return len(cfg.Scope.Shards) > 0 || len(cfg.Scope.ConductorGroups) > 0 || divided
}

// novaFile names the provider config file: the engine's, or its fleet's.
func novaFile(cfg *config.Config) string {
	return "rpengine-" + strings.ToLower(cmp.Or(cfg.FleetID(), cfg.Engine.ID)) + ".yaml"
}

func nodesInScope(ctx context.Context, cfg *config.Config, log *slog.Logger) ([]string, error) {
	c, err := openCloud(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	plugin, err := loadPlugin(ctx, cfg, c, log)
	if err != nil {
		return nil, err
	}
	defer plugin.Close(ctx)
	scope := policy(cfg).Scope
	if len(cfg.Coord.Shards) > 0 {
		scope.Shards = cfg.Coord.Shards
	}
	ns, err := plugin.ListNodes(ctx, scope.Request())
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	var out []string
	for _, n := range ns {
		if scope.Contains(n) {
			out = append(out, strings.ToLower(n.UUID))
		}
	}
	slices.Sort(out)
	return out, nil
}

// providerTraits are the traits nova must add from its provider config:
// the owner marker and the custom marker traits (nova takes custom traits
// only; COMPUTE_NODE it adds by itself).
func providerTraits(cfg *config.Config) []string {
	ts := []string{ownerTrait(cfg)}
	for _, t := range cfg.Provider.MarkerTraits {
		if strings.HasPrefix(t, "CUSTOM_") {
			ts = append(ts, t)
		}
	}
	slices.Sort(ts)
	return slices.Compact(ts)
}

// novaConfigText is the whole printout; nodes nil means every node of the
// nova-compute ($COMPUTE_NODE).
func novaConfigText(cfg *config.Config, nodes []string) string {
	var b strings.Builder
	dir := cfg.Nova.ProviderConfig
	if dir == "" {
		dir = "/etc/nova/provider_config"
	}
	file := strings.TrimRight(dir, "/") + "/" + novaFile(cfg)
	if cfg.FleetMarker() {
		fmt.Fprintf(&b, "# Every engine of this fleet ([coord] partitions) prints this same text: install it once per\n"+
			"# nova-compute. The engines share one owner marker, which a take-over never moves.\n")
	}
	fmt.Fprintf(&b, "# nova.conf of every nova-compute (Ironic driver) serving these nodes; restart it after.\n")
	fmt.Fprintf(&b, "[compute]\nprovider_config_location = %s\n", dir)
	fmt.Fprintf(&b, "\n[workarounds]\n# must equal [nova] skip_reserve_in_use_ironic_nodes in the engine's config\n")
	fmt.Fprintf(&b, "skip_reserve_in_use_ironic_nodes = %v\n", cfg.Nova.SkipReserveInUse)
	if group, ok := novaPartition(cfg); ok {
		fmt.Fprintf(&b, "\n[ironic]\n# the nova-computes of this engine's conductor group, and only them: $COMPUTE_NODE below\n"+
			"# then names every node of the group, enrolled later too (no restart needed)\n")
		fmt.Fprintf(&b, "partition_key = %s\npeer_list = %s\n", group, strings.Join(cfg.Nova.ComputeHosts, ","))
	}
	if group, shard, ok := kollaShard(cfg); ok {
		shardLines(&b, group, shard)
	}
	fmt.Fprintf(&b, "\n# engine config (%s):\n#   [nova]\n#   beside = true\n", "this file's [nova] section")
	if !cfg.Nova.Beside {
		fmt.Fprintf(&b, "#   (not set yet: without it the engine and nova rewrite each other's reserved values)\n")
	}
	for _, t := range cfg.Provider.MarkerTraits {
		if !strings.HasPrefix(t, "CUSTOM_") && t != "COMPUTE_NODE" {
			fmt.Fprintf(&b, "# WARNING: marker trait %s cannot be kept beside nova (only CUSTOM_ traits and COMPUTE_NODE)\n", t)
		}
	}
	providerFile(&b, cfg, nodes, file)
	return b.String()
}

// providerFile prints the provider config: '$COMPUTE_NODE' when nodes is
// nil, else the nodes by uuid; with kolla's one-shard layout both, the
// second for nova before 28.
func providerFile(b *strings.Builder, cfg *config.Config, nodes []string, file string) {
	traits := providerTraits(cfg)
	entry := func(id string) {
		fmt.Fprintf(b, "  - identification:\n      uuid: %s\n    traits:\n      additional:\n", id)
		for _, t := range traits {
			fmt.Fprintf(b, "        - %s\n", t)
		}
	}
	fmt.Fprintf(b, "\n# --- %s ---\nmeta:\n  schema_version: '1.0'\nproviders:\n", file)
	if _, _, ok := kollaShard(cfg); ok {
		entry("'$COMPUTE_NODE'")
		fmt.Fprintf(b, "\n# --- nova < 28 (e.g. 26): no [ironic] shard, so leave out the [ironic] lines above (nova 26\n"+
			"# ignores them and would serve, and mark, every node of the group) and use this %s instead ---\n"+
			"meta:\n  schema_version: '1.0'\nproviders:\n", file)
	} else if nodes == nil {
		entry("'$COMPUTE_NODE'")
		return
	}
	fmt.Fprintf(b, "  # The nodes in scope now, by uuid: nova reads this file only at start, so re-run\n"+
		"  # `engine nova-config` and restart nova-compute after enrolling nodes (`engine validate` says when).\n")
	if len(nodes) == 0 {
		fmt.Fprintf(b, "  []  # no node in this engine's scope\n")
	}
	for _, n := range nodes {
		entry(n)
	}
}

// kollaShard returns the engine's one Ironic shard and its conductor group
// ("" for none) when they are its whole scope: kolla-ansible's layout, one
// nova-compute-ironic per <conductor_group>-<shard> (nova >= 28).
func kollaShard(cfg *config.Config) (group, shard string, ok bool) {
	if len(cfg.Scope.Shards) != 1 || len(cfg.Scope.ConductorGroups) > 1 || cfg.Coord.Partitions > 0 || len(cfg.Coord.Shards) > 0 {
		return "", "", false
	}
	if len(cfg.Scope.ConductorGroups) == 1 {
		group = cfg.Scope.ConductorGroups[0]
	}
	return group, cfg.Scope.Shards[0], true
}

// shardLines are the [ironic] lines of kolla's nova-compute-ironic for
// group and shard (kolla sets each unless it is "default" or empty).
func shardLines(b *strings.Builder, group, shard string) {
	host := strings.Join(slices.DeleteFunc([]string{group, shard, "ironic"}, func(s string) bool { return s == "" }), "-")
	fmt.Fprintf(b, "\n[DEFAULT]\n# kolla-ansible's nova-compute-ironic for this shard\nhost = %s\n", host)
	fmt.Fprintf(b, "\n[ironic]\n# nova >= 28: this nova-compute serves exactly this engine's nodes, so $COMPUTE_NODE below\n"+
		"# names every one of them, enrolled later too (no restart needed)\nshard = %s\n", shard)
	if group != "" && group != "default" {
		fmt.Fprintf(b, "conductor_group = %s\n", group)
	}
}

// novaWriters is what `engine validate` learns about nova-compute writing
// the providers: the uuids nova writes (its signature trait), those among
// them without this engine's marker, and those this engine owns.
type novaWriters struct {
	nova, unmarked, owned []string
}

func findNovaWriters(ctx context.Context, pc *placement.Client, owner string) (novaWriters, error) {
	var w novaWriters
	for _, q := range []struct {
		dst      *[]string
		required string
	}{
		{&w.nova, "COMPUTE_NODE," + novaSignature},
		{&w.unmarked, "COMPUTE_NODE," + novaSignature + ",!" + owner},
		{&w.owned, owner},
	} {
		ps, err := pc.ListProviders(ctx, url.Values{"required": {q.required}})
		if err != nil && !strings.Contains(err.Error(), "No such trait") {
			return w, fmt.Errorf("list providers (required=%s): %w", q.required, err)
		}
		for _, p := range ps {
			*q.dst = append(*q.dst, p.UUID)
		}
	}
	return w, nil
}

// checkNova is validate's step for nova-compute: it names what to
// configure, and fails when the two would fight.
func checkNova(ctx context.Context, pc *placement.Client, cfg *config.Config, known []string, v validation) error {
	owner := ownerTrait(cfg)
	if err := checkOwnerNova(ctx, pc, cfg, v); err != nil {
		return err
	}
	w, err := findNovaWriters(ctx, pc, owner)
	if err != nil {
		return err
	}
	shared := intersect(w.nova, w.owned)
	lostMarker := intersect(w.unmarked, known)
	switch {
	case len(w.nova) == 0:
		v.ok("nova-compute: no provider written by nova-compute's Ironic driver")
		return nil
	case len(shared) > 0 && !cfg.Nova.Beside:
		return fmt.Errorf("nova-compute also writes %d of this engine's providers (e.g. %s) and [nova] beside is not set: "+
			"the two rewrite each other's reserved values; set [nova] beside = true and configure nova as `engine nova-config` prints",
			len(shared), shared[0])
	case len(lostMarker) > 0:
		return fmt.Errorf("nova's provider config is stale or missing: the owner marker %s disappeared from %d providers this engine manages "+
			"(e.g. %s), so nova-compute does not know them as the engine's (nodes enrolled after `engine nova-config` listed the scope "+
			"by uuid, or nova-compute not restarted since): re-run `engine nova-config`, install it and restart nova-compute, "+
			"which reads provider configs only at start", owner, len(lostMarker), lostMarker[0])
	case len(w.unmarked) > 0:
		v.note("nova-compute writes %d providers without the owner marker %s (e.g. %s): if they are this engine's nodes, "+
			"install the provider config `engine nova-config` prints and restart nova-compute; the engine adopts them then",
			len(w.unmarked), owner, w.unmarked[0])
	}
	if !cfg.Nova.Beside {
		v.note("nova-compute writes %d providers; none of this engine's yet: set [nova] beside = true before sharing any", len(w.nova))
		return nil
	}
	v.ok("nova-compute writes %d providers, %d with this engine's marker (nova's provider config): beside nova", len(w.nova), len(shared))
	return nil
}

// checkOwnerNova warns when a nova >= 34 scheduler would hide the
// engine's providers: once every nova-compute reports service version 73,
// nova's owner_nova_filter requires OWNER_NOVA on root providers. Beside
// nova, nova writes it itself; alone, only provider.marker_traits can.
func checkOwnerNova(ctx context.Context, pc *placement.Client, cfg *config.Config, v validation) error {
	if cfg.Nova.Beside || slices.Contains(cfg.Provider.MarkerTraits, engine.OwnerNova) {
		return nil
	}
	ps, err := pc.ListProviders(ctx, url.Values{"required": {engine.OwnerNova}})
	if err != nil && !strings.Contains(err.Error(), "No such trait") {
		return fmt.Errorf("list providers (required=%s): %w", engine.OwnerNova, err)
	}
	if len(ps) > 0 {
		v.warn("%d providers carry %s (e.g. %s): nova >= 34 reports here, and once every nova-compute runs it, nova's scheduler "+
			"requires %s on root providers and never offers this engine's; add it to provider.marker_traits if nova schedules onto them",
			len(ps), engine.OwnerNova, ps[0].UUID, engine.OwnerNova)
	}
	return nil
}

func (v validation) warn(format string, args ...any) {
	v.line(v.out, "warn", "warn  ", fmt.Sprintf(format, args...))
}

func intersect(a, b []string) []string {
	var out []string
	for _, x := range a {
		if slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return out
}

// knownProviders are the providers in the engine's state cache (none
// without a state file).
func knownProviders(cfg *config.Config, c *cloud) []string {
	st, _ := engine.LoadState(cfg.Engine.StateFile, c.stateKey(cfg))
	return st.KnownProviders()
}

// cmdNovaStandDown releases this engine's holds, for handing the providers
// back to nova-compute alone. The engine must be stopped first, or its
// next cycle places them again. The owner marker is nova's to drop: it
// goes at nova's next restart once the provider config file is removed.
func cmdNovaStandDown(ctx context.Context, path string, out io.Writer, log *slog.Logger) error {
	cfg, err := loadConfig(path)
	if err != nil {
		return err
	}
	c, err := openCloud(ctx, cfg, log)
	if err != nil {
		return err
	}
	pc, err := c.connect(ctx, cfg, nil)
	if err != nil {
		return err
	}
	owner := ownerTrait(cfg)
	owned, err := pc.ListProviders(ctx, url.Values{"required": {owner}})
	if err != nil && !strings.Contains(err.Error(), "No such trait") {
		return err
	}
	all, err := pc.ListProviders(ctx, nil)
	if err != nil {
		return err
	}
	var uuids []string
	for _, p := range append(owned, all...) { // owned first: most likely held
		uuids = append(uuids, p.UUID)
	}
	gone, err := retireGone(ctx, cfg, c, pc, owner, owned, out, log)
	if err != nil {
		return err
	}
	uuids = slices.DeleteFunc(uuids, func(u string) bool { return slices.Contains(gone, u) })
	project, user := cfg.HoldIDs()
	whose := fmt.Sprintf("engine %q", cfg.Engine.ID)
	if cfg.FleetMarker() { // the fleet's holds, whichever engine placed them
		user, whose = "", "fleet "+cfg.FleetID()
	}
	n, err := engine.ReleaseHolds(ctx, pc, owner, project, user, uuids)
	if err != nil {
		return err
	}
	left, err := pc.ProjectUsage(ctx, project, user)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "released %d holds of %s (%d units left in project %s)\n", n, whose, left, project)
	fmt.Fprintf(out, "next: remove %s from nova's provider_config_location and restart nova-compute\n", novaFile(cfg))
	if left != 0 {
		return fmt.Errorf("%d units still used by project %s", left, project)
	}
	return nil
}

// retireGone asks the source which of the engine's providers' nodes are
// deleted and retires those providers (engine.RetireGone) before any hold
// is released, so no deleted node is left offered. It returns them.
func retireGone(ctx context.Context, cfg *config.Config, c *cloud, pc *placement.Client, owner string,
	owned []placement.Provider, out io.Writer, log *slog.Logger) ([]string, error) {
	if len(owned) == 0 {
		return nil, nil
	}
	plugin, err := loadPlugin(ctx, cfg, c, log)
	if err != nil {
		return nil, fmt.Errorf("stand-down needs the source to tell deleted nodes, whose holds must not simply go: %w; nothing released", err)
	}
	defer plugin.Close(ctx)
	checker, ok := engine.ProvesDeletion(plugin)
	if !ok {
		return nil, nil // nothing can be proven gone: every hold is released as it is
	}
	uuids := make([]string, len(owned))
	for i, p := range owned {
		uuids[i] = p.UUID
	}
	gone, _, err := checker.ConfirmDeleted(ctx, uuids)
	if err != nil {
		return nil, fmt.Errorf("ask the source which nodes are deleted: %w; nothing released", err)
	}
	n, err := engine.RetireGone(ctx, pc, owner, gone)
	fmt.Fprintf(out, "deleted %d providers of deleted nodes (reserved, hold released, then deleted)\n", n)
	return gone, err
}
