package coord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// kubeView is one read of the fleet's Leases: the etcd backend's view
// (live members, valid claims, the seen registry) and the Lease objects
// behind the claims, for preconditions.
type kubeView struct {
	view
	claimObj map[string]kubeLease // unit → its claim Lease, valid or not
	rv       string               // the list's resourceVersion
}

// readKube lists the fleet's Leases in one request. A member is live
// while its Lease has a holder observed renewing within its duration
// (this member: while its own registration is valid); a claim is valid
// while its holder is the current holder of a live member's Lease.
func (k *KubeCoordinator) readKube(ctx context.Context, self *kubeHold) (kubeView, error) {
	var ls leaseList
	if err := k.api.list(ctx, k.api.leases(), k.names.selector(""), &ls); err != nil {
		return kubeView{}, fmt.Errorf("kubernetes read: %w", err)
	}
	v := kubeView{view: view{members: map[string]MemberInfo{}, claims: map[string]claim{}, seen: map[string]Seen{}},
		claimObj: map[string]kubeLease{}, rv: ls.Metadata.ResourceVersion}
	holderOf := map[string]string{} // live member id → its holder
	for _, l := range ls.Items {
		if l.Metadata.Labels[labelRole] != roleMember {
			continue
		}
		id := l.Metadata.Annotations[annotationID]
		var s Seen
		if json.Unmarshal([]byte(l.Metadata.Annotations[annotationSeen]), &s) == nil && id != "" {
			v.seen[id] = s
		}
		ob := k.obs.observe(l)
		if k.wallClock && l.Spec.RenewTime != nil {
			ob.at = l.Spec.RenewTime.Time // a status snapshot: renewTime by this clock
		}
		if self != nil && l.Spec.HolderIdentity == self.holder {
			ob.at, ob.dur = time.Now(), time.Hour // this process: its own validity decides
		}
		var m MemberInfo
		if ob.live() && json.Unmarshal([]byte(l.Metadata.Annotations[annotationInfo]), &m) == nil && m.ID == id {
			v.members[id], holderOf[id] = m, l.Spec.HolderIdentity
		}
	}
	for _, l := range ls.Items {
		unit := l.Metadata.Annotations[annotationID]
		if l.Metadata.Labels[labelRole] != roleClaim || unit == "" {
			continue
		}
		v.claimObj[unit] = l
		h := l.Spec.HolderIdentity
		id, _, _ := strings.Cut(h, "#")
		if h != "" && holderOf[id] == h {
			var created int64
			if l.Spec.AcquireTime != nil {
				created = l.Spec.AcquireTime.UnixMicro()
			}
			v.claims[unit] = claim{holder: id, created: created}
		}
	}
	return v, nil
}

// Sync runs between cycles, as Coordinator.Sync does: it reads members
// and claims (one list), releases the claims the assignment moved away,
// takes free or dead claims the assignment gives this member, and
// returns what it holds.
func (k *KubeCoordinator) Sync(ctx context.Context) (Assignment, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	h, _, err := k.s.current()
	if h == nil {
		return Assignment{}, fmt.Errorf("kubernetes: %w", err)
	}
	if k.cfg.Division.Dynamic() && !sleep(ctx, time.Until(h.registered.Add(h.ttl))) {
		return Assignment{}, ctx.Err()
	}
	if !time.Now().Before(h.validUntil()) {
		return Assignment{}, errors.New("kubernetes member Lease not renewed in time: holding nothing until it is")
	}
	rctx, cancel := context.WithDeadline(ctx, h.validUntil())
	defer cancel()
	v, err := k.readKube(rctx, h)
	if err != nil {
		return Assignment{}, err
	}
	a := Assignment{lease: h.lease, claimed: map[string]int{}}
	target, err := k.base.target(v.view, &a)
	if err != nil {
		k.releaseAll(rctx, v, h)
		return a, err
	}
	a.Target = target
	if err := k.apply(rctx, v, h, &a); err != nil {
		return a, err
	}
	if h.gone() || !time.Now().Before(h.validUntil()) {
		return Assignment{}, errors.New("kubernetes member Lease lost during sync: holding nothing")
	}
	return a, nil
}

// apply releases held units outside the target, then takes units of the
// target nobody validly holds, each with the claim Lease's
// resourceVersion as precondition: of two members taking one unit, one
// wins and the other waits.
func (k *KubeCoordinator) apply(ctx context.Context, v kubeView, h *kubeHold, a *Assignment) error {
	me := k.cfg.Member
	for _, u := range sortedKeys(v.claims) {
		if v.claims[u].holder == me && !slices.Contains(a.Target, u) {
			if err := k.releaseClaim(ctx, v.claimObj[u], h); err != nil {
				return err
			}
			a.Released = append(a.Released, u)
			delete(v.claims, u)
		}
	}
	for _, u := range a.Target {
		cl, held := v.claims[u]
		switch {
		case held && cl.holder == me:
			a.Held = append(a.Held, u)
			a.claimed[u] = v.claimObj[u].Spec.LeaseTransitions
		case held:
			a.Waiting = append(a.Waiting, u)
		default:
			obj, ok, err := k.takeClaim(ctx, u, v.claimObj, h)
			if err != nil {
				return err
			}
			if !ok {
				a.Waiting = append(a.Waiting, u)
				continue
			}
			v.claims[u], v.claimObj[u] = claim{holder: me, created: obj.Spec.AcquireTime.UnixMicro()}, obj
			a.Held, a.Acquired = append(a.Held, u), append(a.Acquired, u)
			a.claimed[u] = obj.Spec.LeaseTransitions
		}
	}
	return k.settle(ctx, v, h, a)
}

// settle applies the etcd backend's rules for static engines: all of the
// scope or nothing, and the newer of overlapping claims yields.
func (k *KubeCoordinator) settle(ctx context.Context, v kubeView, h *kubeHold, a *Assignment) error {
	if !k.cfg.Division.Dynamic() && len(a.Waiting) > 0 {
		var held []string
		for _, u := range a.Waiting {
			held = append(held, fmt.Sprintf("%s by %s", u, v.claims[u].holder))
		}
		k.releaseAll(ctx, v, h)
		a.Held, a.claimed = nil, nil
		return fmt.Errorf("claimed by another engine: %s; two engines must never share a shard or "+
			"conductor group: holding nothing", strings.Join(held, ", "))
	}
	if yield := overlapping(v.claims, k.cfg.Member); len(yield) > 0 {
		for _, u := range yield {
			if err := k.releaseClaim(ctx, v.claimObj[u], h); err != nil {
				return err
			}
			a.Released = append(a.Released, u)
		}
		a.Held, a.claimed = nil, nil
		return fmt.Errorf("claims %v overlap an older claim of the whole fleet (or this one claims it while others hold parts): "+
			"two engines must never manage the same nodes; holding nothing", yield)
	}
	k.logMoves(v, a)
	return nil
}

// takeClaim creates the unit's claim Lease or takes it over: its holder
// is no live member's current holder. ok is false when another member
// won the race.
func (k *KubeCoordinator) takeClaim(ctx context.Context, unit string, objs map[string]kubeLease, h *kubeHold) (kubeLease, bool, error) {
	cur, exists := objs[unit]
	l := cur
	l.APIVersion, l.Kind = "coordination.k8s.io/v1", "Lease"
	l.Metadata.Name, l.Metadata.Labels = k.names.claim(unit), k.names.labels(roleClaim)
	l.Metadata.Annotations = map[string]string{annotationID: unit}
	t := now()
	l.Spec = leaseSpec{HolderIdentity: h.holder, LeaseDurationSeconds: int(k.cfg.TTL / time.Second),
		AcquireTime: t, RenewTime: t, LeaseTransitions: cur.Spec.LeaseTransitions}
	var out kubeLease
	var err error
	if exists {
		l.Spec.LeaseTransitions++
		err = k.api.do(ctx, http.MethodPut, k.api.leases()+"/"+l.Metadata.Name, l, &out)
	} else {
		err = k.api.do(ctx, http.MethodPost, k.api.leases(), l, &out)
	}
	switch {
	case errors.Is(err, errConflict):
		return kubeLease{}, false, nil
	case err != nil:
		return kubeLease{}, false, fmt.Errorf("kubernetes: claim %s: %w", unit, err)
	}
	return out, true, nil
}

// releaseClaim empties a claim's holder, only if it is still h's.
func (k *KubeCoordinator) releaseClaim(ctx context.Context, l kubeLease, h *kubeHold) error {
	if l.Spec.HolderIdentity != h.holder {
		return nil
	}
	l.Spec.HolderIdentity = ""
	err := k.api.do(ctx, http.MethodPut, k.api.leases()+"/"+l.Metadata.Name, l, nil)
	if err != nil && !errors.Is(err, errConflict) && !errors.Is(err, errNotFound) {
		return fmt.Errorf("kubernetes: release %s: %w", l.Metadata.Annotations[annotationID], err)
	}
	return nil
}

// releaseAll gives up every claim of h, best effort.
func (k *KubeCoordinator) releaseAll(ctx context.Context, v kubeView, h *kubeHold) {
	for _, l := range v.claimObj {
		_ = k.releaseClaim(ctx, l, h)
	}
}

// logMoves logs acquisitions and releases, naming the previous holder.
func (k *KubeCoordinator) logMoves(v kubeView, a *Assignment) {
	from := map[string]string{}
	for _, u := range a.Acquired {
		if p := k.holders[u]; p != "" && p != k.cfg.Member {
			from[u] = p
		}
	}
	k.holders = map[string]string{}
	for u, cl := range v.claims {
		k.holders[u] = cl.holder
	}
	if len(a.Released)+len(a.Acquired) > 0 {
		k.recordMoves(a, from)
		k.log.Info("claims changed", "member", k.cfg.Member, "acquired", a.Acquired, "from", from,
			"released", a.Released, "held", len(a.Held), "waiting", len(a.Waiting), "members", a.Members)
	}
}
