package coord

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"time"
)

// annotationMoves holds a member's last moves on its member Lease; they
// travel with its next renewal, costing no request of their own.
const annotationMoves = "rpengine.io/moves"

// recordMoves keeps the last moves in memory and on the member Lease.
func (k *KubeCoordinator) recordMoves(a *Assignment, from map[string]string) {
	now := time.Now().UTC()
	for _, u := range a.Released {
		k.moves = append(k.moves, Move{At: now, Member: k.cfg.Member, Unit: u, Action: "released"})
	}
	for _, u := range a.Acquired {
		k.moves = append(k.moves, Move{At: now, Member: k.cfg.Member, Unit: u, Action: "acquired", From: from[u]})
	}
	if len(k.moves) > keepMoves {
		k.moves = slices.Clone(k.moves[len(k.moves)-keepMoves:])
	}
	h, _, _ := k.s.current()
	if h == nil {
		return
	}
	b, _ := json.Marshal(k.moves)
	h.mu.Lock()
	defer h.mu.Unlock()
	ann := maps.Clone(h.obj.Metadata.Annotations) // a renewal may be sending the old map
	if ann == nil {
		ann = map[string]string{}
	}
	ann[annotationMoves] = string(b)
	h.obj.Metadata.Annotations = ann
}

// ReadKubeStatus is ReadStatus through the Kubernetes API: members,
// claims and moves of the fleet under prefix, read without registering.
// A member counts as live while its renewTime plus its duration is ahead
// of this machine's clock (a snapshot cannot watch a Lease for a TTL).
func ReadKubeStatus(ctx context.Context, access KubeAccess, prefix string, div Division, recent int) (Status, error) {
	r, err := OpenKubeReader(access, prefix)
	if err != nil {
		return Status{}, err
	}
	defer r.Close()
	r.k.wallClock = true
	var ls leaseList
	if err := r.k.api.list(ctx, r.k.api.leases(), r.k.names.selector(roleMember), &ls); err != nil {
		return Status{}, err
	}
	v, err := r.k.readKube(ctx, nil)
	if err != nil {
		return Status{}, err
	}
	st := Status{Prefix: r.k.names.fleet, Division: div.String(), Claims: map[string]string{}}
	for u, cl := range v.claims {
		st.Claims[u] = cl.holder
	}
	st.fill(v.members, div)
	left := map[string]time.Duration{}
	for _, l := range ls.Items {
		id := l.Metadata.Annotations[annotationID]
		if l.Spec.RenewTime != nil {
			left[id] = time.Until(l.Spec.RenewTime.Add(time.Duration(l.Spec.LeaseDurationSeconds) * time.Second))
		}
		var ms []Move
		if json.Unmarshal([]byte(l.Metadata.Annotations[annotationMoves]), &ms) == nil {
			st.Moves = append(st.Moves, ms...)
		}
	}
	for i := range st.Members {
		st.Members[i].LeaseLeft = max(left[st.Members[i].ID], 0)
	}
	slices.SortStableFunc(st.Moves, func(a, b Move) int { return b.At.Compare(a.At) })
	if recent > 0 && len(st.Moves) > recent {
		st.Moves = st.Moves[:recent]
	}
	return st, nil
}

// fill sets the target, pending moves, unclaimed units and members of a
// status from its claims.
func (st *Status) fill(members map[string]MemberInfo, div Division) {
	var live []string
	for _, id := range sortedKeys(members) {
		if members[id].Division == st.Division {
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
	for _, id := range sortedKeys(members) {
		st.Members = append(st.Members, MemberView{MemberInfo: members[id], Holds: Of(st.Claims, id), Assigned: Of(st.Target, id)})
	}
}
