package coord

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Status is what etcd says about the engines under one prefix, for
// `engine status`. It is read without registering.
type Status struct {
	Prefix   string       `json:"prefix"`
	Division string       `json:"division"`
	Members  []MemberView `json:"members"`
	// Claims maps each claimed unit to its holder; Target maps each unit
	// of the division to the live member rendezvous gives it. Where they
	// differ a move is under way.
	Claims    map[string]string `json:"claims"`
	Target    map[string]string `json:"target,omitempty"`
	Pending   []PendingMove     `json:"pending"`
	Unclaimed []string          `json:"unclaimed"`
	Moves     []Move            `json:"moves"` // newest first
}

// MemberView is one live member with what it holds.
type MemberView struct {
	MemberInfo
	LeaseLeft time.Duration `json:"lease_left_ns"`
	Holds     []string      `json:"holds"`
	Assigned  []string      `json:"assigned"`
}

// PendingMove is a unit whose holder is not its assigned member.
type PendingMove struct {
	Unit string `json:"unit"`
	From string `json:"from"` // holder; "" when nobody holds it
	To   string `json:"to"`
}

// ReadStatus reads members, claims and moves under prefix; div is the
// division the caller is configured with (zero: static).
func ReadStatus(ctx context.Context, endpoints []string, a Access, prefix string, div Division, recent int) (Status, error) {
	cli, err := dial(endpoints, a, 4*time.Second, nil)
	if err != nil {
		return Status{}, err
	}
	defer cli.Close()
	c := &Coordinator{cli: cli, k: newKeys(prefix)}
	v, err := c.read(ctx)
	if err != nil {
		return Status{}, err
	}
	st := Status{Prefix: c.k.prefix, Division: div.String(), Claims: map[string]string{}}
	for u, cl := range v.claims {
		st.Claims[u] = cl.holder
	}
	var live []string
	for _, id := range sortedKeys(v.members) {
		if v.members[id].Division == st.Division {
			live = append(live, id)
		}
	}
	if div.Dynamic() {
		st.Target = Assign(live, div.Units())
		for _, u := range div.Units() {
			if to, from := st.Target[u], st.Claims[u]; to != from {
				st.Pending = append(st.Pending, PendingMove{Unit: u, From: from, To: to})
			}
			if st.Claims[u] == "" {
				st.Unclaimed = append(st.Unclaimed, u)
			}
		}
	}
	for _, id := range sortedKeys(v.members) {
		m := MemberView{MemberInfo: v.members[id], Holds: Of(st.Claims, id), Assigned: Of(st.Target, id)}
		m.LeaseLeft = leaseLeft(ctx, cli, m.Lease)
		st.Members = append(st.Members, m)
	}
	if st.Moves, err = readMoves(ctx, cli, c.k, recent); err != nil {
		return st, err
	}
	return st, nil
}

func leaseLeft(ctx context.Context, cli *clientv3.Client, hex string) time.Duration {
	var id int64
	if _, err := fmt.Sscanf(hex, "%x", &id); err != nil {
		return 0
	}
	r, err := cli.TimeToLive(ctx, clientv3.LeaseID(id))
	if err != nil || r.TTL < 0 {
		return 0
	}
	return time.Duration(r.TTL) * time.Second
}

func readMoves(ctx context.Context, cli *clientv3.Client, k keys, recent int) ([]Move, error) {
	r, err := cli.Get(ctx, k.moves(), clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("etcd read moves: %w", err)
	}
	var all []Move
	for _, kv := range r.Kvs {
		var ms []Move
		if json.Unmarshal(kv.Value, &ms) == nil {
			all = append(all, ms...)
		}
	}
	slices.SortStableFunc(all, func(a, b Move) int { return b.At.Compare(a.At) })
	if recent > 0 && len(all) > recent {
		all = all[:recent]
	}
	return all, nil
}
