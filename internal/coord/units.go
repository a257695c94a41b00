package coord

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Division is what the live members divide: Partitions hash partitions of
// node uuids (engine.Partition), or the named Ironic Shards. The zero
// Division is the static mode: each member claims its configured scope.
type Division struct {
	Partitions int
	Shards     []string
	// Within names the part of the fleet being divided (the engines'
	// static scope, "" for all of it), so that groups of engines dividing
	// different parts under one prefix are told apart, not mixed.
	Within string
}

// Dynamic says whether members divide units among themselves.
func (d Division) Dynamic() bool { return d.Partitions > 0 || len(d.Shards) > 0 }

// Units lists the division's units in a fixed order.
func (d Division) Units() []string {
	var out []string
	for i := range d.Partitions {
		out = append(out, PartitionUnit(d.Partitions, i))
	}
	for _, s := range d.Shards {
		out = append(out, "shard/"+s)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// String names the division; members must agree on it, or the same unit
// name would mean different nodes.
func (d Division) String() string {
	within := ""
	if d.Within != "" {
		within = " within " + d.Within
	}
	switch {
	case d.Partitions > 0:
		return "partitions=" + strconv.Itoa(d.Partitions) + within
	case len(d.Shards) > 0:
		s := slices.Clone(d.Shards)
		slices.Sort(s)
		return "shards=" + strings.Join(slices.Compact(s), ",") + within
	}
	return "static"
}

// PartitionUnit names partition i of n. n is in the name so that engines
// configured with different counts never share (or miss) a claim.
func PartitionUnit(n, i int) string { return fmt.Sprintf("partition/%d/%04d", n, i) }

// StaticUnits are the claims of a statically scoped engine: one per shard
// and per conductor group it is given, or "all" when it manages the whole
// fleet.
func StaticUnits(shards, groups []string) []string {
	var out []string
	for _, s := range shards {
		out = append(out, "shard/"+s)
	}
	for _, g := range groups {
		out = append(out, "group/"+g)
	}
	if len(out) == 0 {
		out = []string{unitAll}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

const unitAll = "all"

// Partitions returns the partition numbers among units.
func Partitions(units []string) []int {
	var out []int
	for _, u := range units {
		if rest, ok := strings.CutPrefix(u, "partition/"); ok {
			if _, i, ok := strings.Cut(rest, "/"); ok {
				if n, err := strconv.Atoi(i); err == nil {
					out = append(out, n)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// Shards returns the shard names among units.
func Shards(units []string) []string {
	var out []string
	for _, u := range units {
		if s, ok := strings.CutPrefix(u, "shard/"); ok {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}
