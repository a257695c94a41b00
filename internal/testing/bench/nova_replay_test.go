package bench

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/rpengine/rpengine/internal/testing/ironictest"
)

// replayCycles is how many cycles each side runs from the one whose window
// holds the change: enough to see a deleted provider come back.
const replayCycles = 3

// replayRow is what one side did in one direction, per round.
type replayRow struct {
	direction, side     string
	windowReq, windowWr []float64 // the cycle with the change in its window
	afterReq, afterWr   []float64 // the cycles after it, summed
	deleted, created    []float64 // DELETE / POST /resource_providers answered 2xx
	allocDeleted        []float64 // DELETE /allocations answered 2xx
	missing             []float64 // cycles that ended with the node without a provider
	reserved            []string  // the node's reserved after each cycle, per round
	writes              []string  // the window cycle's writes as logged, per round
}

// replay1841481 replays bug 1841481's window both ways against nova and
// the engine of rig, on the real Ironic: the change lands between a side's
// node listing and its instance listing (driver.py asks the window from
// inside nova's _refresh_cache; the engine's instance listing, from a
// compute stub, applies it after a node listing went through the gate).
// Each round uses two nodes of its own: D deployed first (its instance
// moves away in the window), F free (an instance lands on it). The sides
// take turns on the shared Ironic: after one side's turn the node is put
// back as the other side last saw it. What each did is read from the
// counter's request log and from Placement before and after each cycle.
// With restore, the nodes are made free again for the next fleet size.
func replay1841481(t *testing.T, r *novaRig, ic *ironictest.Client, fleet []string, rounds int, restore bool) []replayRow {
	if len(fleet) < 1+2*rounds {
		t.Fatalf("replay: %d rounds need %d nodes, have %d", rounds, 1+2*rounds, len(fleet))
	}
	w, urls, err := newWindow(r.ironic, t.Cleanup)
	if err != nil {
		t.Fatal(err)
	}
	stub := w.servers
	if err := os.WriteFile(filepath.Join(r.nova.Dir, "window.url"), []byte(urls.hook), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := engineConfig(t, filepath.Dir(r.cfg), "replay.toml", r.engURL, r.plugin, urls.gate, urls.compute)
	r.c.LogRequests("nova", true)
	r.c.LogRequests("engine", true)
	sides := []struct {
		name, raw string
		cycle     func()
	}{
		{"nova", r.novaRaw, func() { r.nova.PeriodicCost(t, false) }},
		{"engine", r.engRaw, func() { engineOnce(t, r.bin, cfg) }},
	}
	rows := map[string]*replayRow{}
	row := func(dir, side string) *replayRow {
		k := dir + "/" + side
		if rows[k] == nil {
			rows[k] = &replayRow{direction: dir, side: side}
		}
		return rows[k]
	}
	for round := range rounds {
		d, f := fleet[1+2*round], fleet[2+2*round]
		x, y := newUUID(t), newUUID(t)
		// Setup: D deployed with instance x, known to both sides.
		ic.Deploy(t, d, x)
		r.nova.AddInstance(t, x, d)
		stub.set(x, d, true)
		for _, s := range sides {
			if err := claim(t.Context(), s.raw, x, d); err != nil {
				t.Fatal(err)
			}
			s.cycle()
			r.c.Take(s.name)
			r.c.TakeLog(s.name)
			if got := reservedOf(t, s.raw, d); got != "1" {
				t.Fatalf("replay setup: %s: deployed node %s reserved %s, want 1", s.name, d, got)
			}
		}
		for _, dir := range []struct {
			name   string
			land   bool
			node   string
			inst   string
			before func() // puts the node back as the next side last saw it
		}{
			{"a deployed node's instance moves away", false, d, x, func() {
				if err := setInstance(t.Context(), r.ironic, d, x); err != nil {
					t.Fatal(err)
				}
			}},
			{"an instance lands on a free node", true, f, y, func() {
				if err := setInstance(t.Context(), r.ironic, f, ""); err != nil {
					t.Fatal(err)
				}
			}},
		} {
			for i, s := range sides {
				if i > 0 {
					dir.before()
				}
				c := replayChange{side: s.name, land: dir.land, node: dir.node, instance: dir.inst, placement: s.raw}
				if s.name == "engine" {
					c.servers = stub
				}
				observe(t, r, w, c, s.cycle, row(dir.name, s.name))
			}
		}
	}
	if restore {
		for round := range rounds {
			d, f := fleet[1+2*round], fleet[2+2*round]
			ic.Provision(t, d, nodes.TargetDeleted, "available")
			ic.PowerOn(t, d)
			ic.SetInstance(t, f, "")
		}
	}
	var out []replayRow
	for _, dir := range []string{"a deployed node's instance moves away", "an instance lands on a free node"} {
		for _, s := range sides {
			out = append(out, *row(dir, s.name))
		}
	}
	return out
}

// observe arms c, runs replayCycles cycles of side c.side and records
// what they did to c.node's provider.
func observe(t *testing.T, r *novaRig, w *window, c replayChange, cycle func(), row *replayRow) {
	t.Helper()
	raw := c.placement
	if !hasProvider(t, raw, c.node) {
		t.Fatalf("replay: %s: node %s has no provider before the window", c.side, c.node)
	}
	var deleted, created, allocDeleted, missing, afterReq, afterWr float64
	var reserved []string
	w.arm(c)
	for i := range replayCycles {
		cycle()
		if i == 0 {
			if n := w.take(); n != 1 {
				t.Fatalf("replay: %s: the change was applied %d times in the window cycle, want 1", c.side, n)
			}
		}
		n := r.c.Take(c.side)
		if i == 0 {
			row.windowReq, row.windowWr = append(row.windowReq, float64(n.Total)), append(row.windowWr, float64(n.Writes))
		} else {
			afterReq, afterWr = afterReq+float64(n.Total), afterWr+float64(n.Writes)
		}
		log := r.c.TakeLog(c.side)
		if i == 0 {
			row.writes = append(row.writes, writesOf(log, c))
		}
		for _, l := range log {
			ok := l.Status >= 200 && l.Status < 300
			switch {
			case ok && l.Method == "DELETE" && strings.HasPrefix(l.Path, "/resource_providers/"):
				deleted++
			case ok && l.Method == "POST" && l.Path == "/resource_providers":
				created++
			case ok && l.Method == "DELETE" && strings.HasPrefix(l.Path, "/allocations/"):
				allocDeleted++
			}
		}
		rv := reservedOf(t, raw, c.node)
		if rv == "–" {
			missing++
		}
		reserved = append(reserved, rv)
	}
	if c.side == "engine" && deleted > 0 {
		t.Errorf("replay: the engine deleted %v providers", deleted)
	}
	row.afterReq, row.afterWr = append(row.afterReq, afterReq), append(row.afterWr, afterWr)
	row.deleted, row.created = append(row.deleted, deleted), append(row.created, created)
	row.allocDeleted, row.missing = append(row.allocDeleted, allocDeleted), append(row.missing, missing)
	row.reserved = append(row.reserved, strings.Join(reserved, ", "))
}

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// writesOf lists the writes of log with Placement's status, the node and
// instance of c and other uuids named by role, repeats counted.
func writesOf(log []Logged, c replayChange) string {
	var ws []string
	for _, l := range log {
		if l.Method == "GET" || l.Method == "HEAD" {
			continue
		}
		p := strings.NewReplacer(c.node, "{node}", c.instance, "{instance}").Replace(l.Path)
		ws = append(ws, fmt.Sprintf("%s %s %d", l.Method, uuidRE.ReplaceAllString(p, "{uuid}"), l.Status))
	}
	if len(ws) == 0 {
		return "none"
	}
	var out []string
	for i := 0; i < len(ws); {
		j := i
		for j < len(ws) && ws[j] == ws[i] {
			j++
		}
		if j-i > 1 {
			out = append(out, fmt.Sprintf("%s ×%d", ws[i], j-i))
		} else {
			out = append(out, ws[i])
		}
		i = j
	}
	return strings.Join(out, "; ")
}

// reservedOf reads node's reserved units of benchClass from placement
// directly; "–" when it has no provider.
func reservedOf(t *testing.T, placement, node string) string {
	t.Helper()
	status, body := placementGet(t, placement+"/resource_providers/"+node+"/inventories")
	if status == http.StatusNotFound {
		return "–"
	}
	var inv struct {
		Inventories map[string]struct {
			Reserved int `json:"reserved"`
		} `json:"inventories"`
	}
	if status != http.StatusOK || json.Unmarshal(body, &inv) != nil {
		t.Fatalf("replay: inventories of %s: %d %s", node, status, body)
	}
	i, ok := inv.Inventories[benchClass]
	if !ok {
		return "no inventory"
	}
	return fmt.Sprint(i.Reserved)
}

func hasProvider(t *testing.T, placement, node string) bool {
	status, body := placementGet(t, placement+"/resource_providers/"+node)
	if status != http.StatusOK && status != http.StatusNotFound {
		t.Fatalf("replay: provider %s: %d %s", node, status, body)
	}
	return status == http.StatusOK
}

func placementGet(t *testing.T, url string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", url, nil)
	req.Header.Set("X-Auth-Token", "admin")
	req.Header.Set("OpenStack-API-Version", "placement 1.39")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, b
}

func newUUID(t *testing.T) string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

func replayMarkdown(rows []replayRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### Bug 1841481 replayed, both ways\n\n")
	fmt.Fprintf(&b, "The change lands between each side's node listing and its instance listing, on the real Ironic: for nova,\n")
	fmt.Fprintf(&b, "inside its own `IronicDriver._refresh_cache`, after `_get_node_list` returned and before\n")
	fmt.Fprintf(&b, "`InstanceList.get_uuids_by_host` (scripts/nova/driver.py asks the bench for it there); for the engine\n")
	fmt.Fprintf(&b, "(Ironic plugin, instances from a Compute API stub holding the same records as nova's database), when its\n")
	fmt.Fprintf(&b, "instance listing arrives after a node listing Ironic answered. *Moves away*: Ironic clears the deployed node's\n")
	fmt.Fprintf(&b, "`instance_uuid`, the instance's record moves to another host and its allocation leaves the node. *Lands*: the\n")
	fmt.Fprintf(&b, "scheduler's allocation, the instance's record on this host and node, Ironic's `instance_uuid`. The sides take\n")
	fmt.Fprintf(&b, "turns on the one Ironic (the node is put back as the other side last saw it); each runs %d cycles from the one\n", replayCycles)
	fmt.Fprintf(&b, "with the change in its window. Deleted and created providers are the `DELETE`/`POST /resource_providers` Placement\n")
	fmt.Fprintf(&b, "accepted (request log of the counting proxy); \"without a provider\" and reserved are read from Placement after\n")
	fmt.Fprintf(&b, "each cycle (– = no provider). Cells: min / median / max of rounds.\n\n")
	fmt.Fprintf(&b, "| direction | side (rounds) | window cycle: Placement requests | next %d cycles: requests | providers deleted | providers created | allocations deleted | cycles ending with the node without a provider | the node's reserved after each cycle | the window cycle's writes, as Placement answered them |\n", replayCycles-1)
	fmt.Fprintf(&b, "|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		seqs := slices.Compact(slices.Sorted(slices.Values(r.reserved)))
		writes := slices.Compact(slices.Sorted(slices.Values(r.writes)))
		fmt.Fprintf(&b, "| %s | %s (%d) | %s (%s writes) | %s (%s writes) | %s | %s | %s | %s | %s | %s |\n",
			r.direction, r.side, len(r.windowReq),
			SpreadOf(r.windowReq).Format("%.0f"), SpreadOf(r.windowWr).Format("%.0f"),
			SpreadOf(r.afterReq).Format("%.0f"), SpreadOf(r.afterWr).Format("%.0f"),
			SpreadOf(r.deleted).Format("%.0f"), SpreadOf(r.created).Format("%.0f"),
			SpreadOf(r.allocDeleted).Format("%.0f"), SpreadOf(r.missing).Format("%.0f"),
			strings.Join(seqs, " or "), strings.Join(writes, " or "))
	}
	return b.String()
}
