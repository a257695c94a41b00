package main

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/rpengine/rpengine/internal/testing/bench"
)

// A rule picks rows by words of their figure and fleet.
type rule struct{ metric, fleet string }

func (r rule) match(row bench.Row) bool {
	return strings.Contains(row.Metric, r.metric) && strings.Contains(row.Fleet, r.fleet)
}

// whys name, for a goal not met, the profile that says why (a path from
// the repository root) or, with no file, the reason itself.
var whys = []struct {
	rule
	why string
}{
	{rule{"Ironic requests per cycle", ""}, "engine/PROFILE-100k.md"},
	{rule{"whole plugin call in Wasm", "plugins/vmware"}, "plugins/vmware/PROFILE.md"},
	{rule{"VMware plugin", ""}, "plugins/vmware/PROFILE.md"},
	{rule{"", "plugins/ironic"}, "hostabi/PROFILE-10k.md"},
	{rule{"Ironic plugin", ""}, "hostabi/PROFILE-10k.md"},
	{rule{"ABI's own cost", ""}, "hostabi/PROFILE-10k.md"},
	{rule{"cold start: engine write rate", "(fake)"}, "the fake Placement is bound by the engine's own CPU on 2 shared cores (notes below); the real Placements are the ones the ceiling is about"},
	{rule{"cold start", ""}, "not profiled: a † ratio of two rates measured one after the other; read its verdict only from a quiet machine"},
	{rule{"engine CPU per idle cycle", ""}, "engine/PROFILE-100k.md"},
	{rule{"idle listing", ""}, "engine/PROFILE-100k.md"},
	{rule{"peak RSS", ""}, "engine/PROFILE-100k.md"},
	{rule{"restart to end of first cycle", ""}, "engine/PROFILE-100k.md"},
	{rule{"unlisted providers", ""}, "engine/PROFILE-100k.md"},
	{rule{"first start of the plugin", ""}, "engine/PROFILE-100k.md"},
	{rule{"requests", ""}, "engine/PROFILE-100k.md"},
	{rule{"", ""}, "not profiled"},
}

// explain appends to each NO row the profile that says why: a link
// relative to the report's directory, or "not profiled yet" when the
// file is not there.
func explain(rows []bench.Stamped, root, reportDir string) {
	for i, r := range rows {
		if r.Met != "NO" {
			continue
		}
		for _, w := range whys {
			if !w.match(r.Row) {
				continue
			}
			rows[i].Met = "NO (" + whyText(w.why, root, reportDir) + ")"
			break
		}
	}
}

func whyText(why, root, reportDir string) string {
	if !strings.HasSuffix(why, ".md") {
		return why
	}
	if _, err := os.Stat(filepath.Join(root, why)); err != nil {
		return why + ": not written yet"
	}
	link := why
	dir, _ := filepath.Abs(reportDir)
	if rel, err := filepath.Rel(dir, filepath.Join(root, why)); err == nil {
		link = filepath.ToSlash(rel)
	}
	return "why: [" + why + "](" + link + ")"
}

// summaryRules pick the rows the summary repeats, in its order: the
// figures of cost in proportion to what changed and the 100k ceilings.
var summaryRules = []rule{
	{"engine CPU per idle cycle", "100000 (fake)"},
	{"engine CPU per idle cycle / the minimal idle job", "10000 (fake)"},
	{"peak RSS of `engine once`, MB: the cold run", "100000"},
	{"unlisted providers (scope shrank", "unlisted"},
	{"unlisted providers: Placement requests", "unlisted"},
	{"unlisted providers: peak RSS", ""},
	{"unlisted providers: growth exponent", ""},
	{"providers another engine owns, unchanged", ""},
	{"providers blocked over engine.delete_limit", ""},
	{"Ironic requests per cycle", ""},
	{"whole plugin call in Wasm", "plugins/ironic"},
	{"whole plugin call in Wasm", "plugins/vmware"},
	{"Ironic plugin, Wasm", ""},
	{"VMware plugin, Wasm", ""},
	{"first start of the plugin", ""},
	{"idle listing", ""},
}

// summary is the rows the summary repeats, each once.
func summary(rows []bench.Stamped) []bench.Stamped {
	var out []bench.Stamped
	taken := make([]bool, len(rows))
	for _, s := range summaryRules {
		for i, r := range rows {
			if !taken[i] && s.match(r.Row) {
				taken[i] = true
				out = append(out, r)
			}
		}
	}
	return out
}
