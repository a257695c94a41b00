package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rpengine/rpengine/internal/coord"
)

// recentMoves is how many moves `engine status` shows.
const recentMoves = 20

// cmdStatus shows, from etcd, the engines sharing this engine's fleet:
// members, what each holds and is assigned, moves under way and the
// recent ones. It registers nothing and writes nothing.
func cmdStatus(ctx context.Context, path string, asJSON bool, out io.Writer) error {
	cfg, err := loadConfig(path)
	if err != nil {
		return err
	}
	if len(cfg.Coord.Etcd) == 0 {
		return fmt.Errorf("%w: status needs [coord] etcd in the config", errUsage)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	div := division(cfg)
	if err := etcdAccepts(ctx, cfg); err != nil {
		return err
	}
	st, err := coord.ReadStatus(ctx, cfg.Coord.Etcd, etcdAccess(cfg), cfg.Coord.Prefix, div, recentMoves)
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(out, st)
	}
	printStatus(out, st)
	return nil
}

func printStatus(out io.Writer, st coord.Status) {
	fmt.Fprintf(out, "etcd prefix %s, division %s: %d members\n", st.Prefix, st.Division, len(st.Members))
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
