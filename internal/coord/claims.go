package coord

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// claim is one held unit.
type claim struct {
	holder  string
	lease   clientv3.LeaseID
	created int64 // create revision: which of two overlapping claims came first
}

// view is one consistent read of members, claims and the seen registry.
type view struct {
	members map[string]MemberInfo
	claims  map[string]claim // unit → claim
	seen    map[string]Seen
}

func (c *Coordinator) read(ctx context.Context) (view, error) {
	r, err := c.cli.Txn(ctx).Then(
		clientv3.OpGet(c.k.members(), clientv3.WithPrefix()),
		clientv3.OpGet(c.k.claims(), clientv3.WithPrefix()),
		clientv3.OpGet(c.k.seens(), clientv3.WithPrefix()),
	).Commit()
	if err != nil {
		return view{}, fmt.Errorf("etcd read: %w", err)
	}
	v := view{members: map[string]MemberInfo{}, claims: map[string]claim{}, seen: map[string]Seen{}}
	for _, kv := range r.Responses[0].GetResponseRange().Kvs {
		var m MemberInfo
		if json.Unmarshal(kv.Value, &m) == nil && m.ID != "" {
			v.members[m.ID] = m
		}
	}
	for _, kv := range r.Responses[1].GetResponseRange().Kvs {
		v.claims[c.k.unitOf(string(kv.Key))] = claim{holder: string(kv.Value), lease: clientv3.LeaseID(kv.Lease), created: kv.CreateRevision}
	}
	for _, kv := range r.Responses[2].GetResponseRange().Kvs {
		var s Seen
		if json.Unmarshal(kv.Value, &s) == nil {
			v.seen[string(kv.Key[len(c.k.seens()):])] = s
		}
	}
	return v, nil
}

// remember records this member in the seen registry, so that peers may
// take over its providers after it is gone for good.
func (c *Coordinator) remember(ctx context.Context, v view) error {
	want := Seen{OwnerTrait: c.cfg.OwnerTrait, Division: c.cfg.Division.String()}
	if v.seen[c.cfg.Member] == want {
		return nil
	}
	b, _ := json.Marshal(want)
	if _, err := c.cli.Put(ctx, c.k.seen(c.cfg.Member), string(b)); err != nil {
		return fmt.Errorf("etcd: record member: %w", err)
	}
	return nil
}

// apply releases held units outside target, then acquires free units in
// it. A unit held by someone else is left to its holder, which releases
// it between its own cycles or loses it with its lease.
func (c *Coordinator) apply(ctx context.Context, v view, l *lease, a *Assignment) error {
	me := c.cfg.Member
	mine := func(cl claim) bool { return cl.holder == me && cl.lease == l.id }
	for _, u := range sortedKeys(v.claims) {
		if cl := v.claims[u]; mine(cl) && !slices.Contains(a.Target, u) {
			if err := c.release(ctx, u, l); err != nil {
				return err
			}
			a.Released = append(a.Released, u)
			delete(v.claims, u)
		}
	}
	for _, u := range a.Target {
		cl, held := v.claims[u]
		switch {
		case held && mine(cl):
			a.Held = append(a.Held, u)
		case held:
			a.Waiting = append(a.Waiting, u)
		default:
			ok, rev, err := c.acquire(ctx, u, l)
			if err != nil {
				return err
			}
			if !ok { // taken since the read
				a.Waiting = append(a.Waiting, u)
				continue
			}
			v.claims[u] = claim{holder: me, lease: l.id, created: rev}
			a.Held, a.Acquired = append(a.Held, u), append(a.Acquired, u)
		}
	}
	if !c.cfg.Division.Dynamic() && len(a.Waiting) > 0 {
		// A static engine manages all of its scope or nothing.
		var held []string
		for _, u := range a.Waiting {
			held = append(held, fmt.Sprintf("%s by %s", u, v.claims[u].holder))
		}
		c.releaseAll(ctx, v, l)
		a.Held = nil
		return fmt.Errorf("claimed by another engine: %s; two engines must never share a shard or "+
			"conductor group: holding nothing", strings.Join(held, ", "))
	}
	if yield := overlapping(v.claims, me); len(yield) > 0 {
		for _, u := range yield {
			if err := c.release(ctx, u, l); err != nil {
				return err
			}
			a.Released = append(a.Released, u)
		}
		a.Held = nil
		return fmt.Errorf("claims %v overlap an older claim of the whole fleet (or this one claims it while others hold parts): "+
			"two engines must never manage the same nodes; holding nothing", yield)
	}
	c.record(ctx, v, a)
	return nil
}

func (c *Coordinator) acquire(ctx context.Context, unit string, l *lease) (bool, int64, error) {
	key := c.k.claim(unit)
	r, err := c.cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, c.cfg.Member, clientv3.WithLease(l.id))).Commit()
	if err != nil {
		return false, 0, fmt.Errorf("etcd: claim %s: %w", unit, err)
	}
	return r.Succeeded, r.Header.Revision, nil
}

// release deletes a claim only if it is still this lease's.
func (c *Coordinator) release(ctx context.Context, unit string, l *lease) error {
	key := c.k.claim(unit)
	_, err := c.cli.Txn(ctx).If(
		clientv3.Compare(clientv3.Value(key), "=", c.cfg.Member),
		clientv3.Compare(clientv3.LeaseValue(key), "=", l.id),
	).Then(clientv3.OpDelete(key)).Commit()
	if err != nil {
		return fmt.Errorf("etcd: release %s: %w", unit, err)
	}
	return nil
}

// releaseAll gives up every claim of l, best effort: Sync failed on a
// condition under which nothing may be held.
func (c *Coordinator) releaseAll(ctx context.Context, v view, l *lease) {
	for u, cl := range v.claims {
		if cl.holder == c.cfg.Member && cl.lease == l.id {
			_ = c.release(ctx, u, l)
		}
	}
}

// overlapping returns the claims me must give up because they overlap
// another member's: "all" covers every other unit. The newer side yields,
// so exactly one of two such engines keeps writing.
func overlapping(claims map[string]claim, me string) []string {
	var yield []string
	for u, mc := range claims {
		if mc.holder != me {
			continue
		}
		for v, oc := range claims {
			if oc.holder != me && (u == unitAll || v == unitAll) && mc.created > oc.created {
				yield = append(yield, u)
				break
			}
		}
	}
	slices.Sort(yield)
	return yield
}

// record keeps the last moves in memory and in moves/<id>.
func (c *Coordinator) record(ctx context.Context, v view, a *Assignment) {
	now := time.Now().UTC()
	for _, u := range a.Released {
		c.moves = append(c.moves, Move{At: now, Member: c.cfg.Member, Unit: u, Action: "released"})
	}
	for _, u := range a.Acquired {
		from := c.holders[u]
		if from == c.cfg.Member {
			from = ""
		}
		c.moves = append(c.moves, Move{At: now, Member: c.cfg.Member, Unit: u, Action: "acquired", From: from})
	}
	c.holders = map[string]string{}
	for u, cl := range v.claims {
		c.holders[u] = cl.holder
	}
	if len(a.Released)+len(a.Acquired) == 0 {
		return
	}
	if len(c.moves) > keepMoves {
		c.moves = slices.Clone(c.moves[len(c.moves)-keepMoves:])
	}
	c.log.Info("claims changed", "member", c.cfg.Member, "acquired", a.Acquired, "released", a.Released,
		"held", len(a.Held), "waiting", len(a.Waiting), "members", a.Members)
	b, _ := json.Marshal(c.moves)
	if _, err := c.cli.Put(ctx, c.k.move(c.cfg.Member), string(b)); err != nil {
		c.log.Warn("etcd: moves not recorded", "err", err)
	}
}

// keepMoves bounds moves/<id>.
const keepMoves = 64

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
