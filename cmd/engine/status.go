package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rpengine/rpengine/internal/config"
	"github.com/rpengine/rpengine/internal/coord"
	"github.com/rpengine/rpengine/internal/ops"
)

// recentMoves is how many moves `engine status` shows.
const recentMoves = 20

// cmdStatus shows, from etcd, the engines sharing this engine's fleet:
// members, what each holds and is assigned, moves under way and the
// recent ones; without [coord] etcd, the one engine's daemon as its API
// tells (singleStatus). It registers nothing and writes nothing.
func cmdStatus(ctx context.Context, path string, asJSON bool, out io.Writer) error {
	cfg, err := loadConfig(path)
	if err != nil {
		return err
	}
	if !cfg.Coord.Enabled() {
		return singleStatus(ctx, cfg, asJSON, out)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	div := division(cfg)
	if cfg.Coord.Backend != config.BackendKubernetes {
		if err := etcdAccepts(ctx, cfg); err != nil {
			return err
		}
	}
	st, err := readStatus(ctx, cfg, div)
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(out, st)
	}
	printStatus(out, st, cfg.Coord.Backend)
	return nil
}

// printStatus prints st; backend names where it was read.
func printStatus(out io.Writer, st coord.Status, backend string) {
	where := "etcd prefix"
	if backend == config.BackendKubernetes {
		where = "Kubernetes (Leases and ConfigMaps) prefix"
	}
	fmt.Fprintf(out, "%s %s, division %s: %d members\n", where, st.Prefix, st.Division, len(st.Members))
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MEMBER\tHOST\tPID\tSTARTED\tLEASE LEFT\tDIVISION\tHOLDS\tASSIGNED\tUNITS HELD")
	for _, m := range st.Members {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%d\t%d\t%s\n", m.ID, m.Host, m.PID, m.Started.Format(time.RFC3339),
			m.LeaseLeft, m.Division, len(m.Holds), len(m.Assigned), compact(m.Holds))
	}
	tw.Flush()
	if st.Division != "static" {
		fmt.Fprintf(out, "moves under way: %d\n", len(st.Pending))
		for _, p := range st.Pending {
			from := p.From
			if from == "" {
				from = "(nobody)"
			}
			fmt.Fprintf(out, "  %s: %s -> %s\n", p.Unit, from, p.To)
		}
		if len(st.Unclaimed) > 0 {
			fmt.Fprintf(out, "unclaimed: %s\n", compact(st.Unclaimed))
		}
	}
	fmt.Fprintf(out, "recent moves: %d\n", len(st.Moves))
	for _, m := range st.Moves {
		from := ""
		if m.From != "" {
			from = " from " + m.From
		}
		fmt.Fprintf(out, "  %s  %s %s %s%s\n", m.At.Format(time.RFC3339), m.Member, m.Action, m.Unit, from)
	}
}

// compact writes partition units as ranges ("partitions 0-3,7") and other
// units as they are.
func compact(units []string) string {
	parts := coord.Partitions(units)
	var rest []string
	for _, u := range units {
		if !strings.HasPrefix(u, "partition/") {
			rest = append(rest, u)
		}
	}
	var b strings.Builder
	if len(parts) > 0 {
		b.WriteString("partitions ")
		for i := 0; i < len(parts); {
			j := i
			for j+1 < len(parts) && parts[j+1] == parts[j]+1 {
				j++
			}
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(parts[i]))
			if j > i {
				b.WriteString("-" + strconv.Itoa(parts[j]))
			}
			i = j + 1
		}
	}
	if len(rest) > 0 {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strings.Join(rest, " "))
	}
	return b.String()
}

// engineStatus is `status` for an engine without [coord] etcd: whether
// its daemon answers on server.listen, and its last cycle.
type engineStatus struct {
	Engine    string          `json:"engine"`
	Daemon    string          `json:"daemon"` // the API's address, "" when none answers
	StateFile string          `json:"state_file"`
	Last      *ops.LastReport `json:"last,omitempty"`
}

// singleStatus asks this engine's daemon for its last report; no etcd.
func singleStatus(ctx context.Context, cfg *config.Config, asJSON bool, out io.Writer) error {
	st := engineStatus{Engine: cfg.Engine.ID, StateFile: statePath(cfg.Engine.StateFile, cfg.Engine.ID, cfg.Placement.Endpoint.Raw())}
	var last ops.LastReport
	asked, addr, err := fromDaemon(ctx, cfg, "report", &last, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	if asked {
		st.Daemon, st.Last = addr, &last
	}
	if asJSON {
		return printJSON(out, st)
	}
	fmt.Fprintf(out, "engine %s, state file %s\n", st.Engine, orDash(st.StateFile))
	switch {
	case !asked && cfg.Server.Listen == "":
		fmt.Fprintln(out, "daemon: unknown (server.listen is not set, so engine run has no API to ask)")
	case !asked:
		fmt.Fprintf(out, "daemon: none answers at server.listen %s\n", cfg.Server.Listen)
	case last.Report == nil:
		fmt.Fprintf(out, "daemon: running at %s; no cycle finished yet (running: %v)\n", addr, last.Running)
	default:
		r := last.Report
		fmt.Fprintf(out, "daemon: running at %s; %d cycles since it started, the last %s at %s\n", addr, last.Cycles, last.Outcome, last.End.Format(time.RFC3339))
		fmt.Fprintf(out, "last cycle: nodes %d: created %d, updated %d, unchanged %d, deleted %d, quarantined %d, failed %d, errors %d\n",
			r.Nodes, r.Created, r.Updated, r.Unchanged, r.Deleted, r.Quarantined, r.Failed, len(r.Errors))
	}
	return nil
}
