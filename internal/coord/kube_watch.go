package coord

import (
	"context"
	"encoding/json"
	"time"
)

// Watch calls changed when another member registers or leaves (its Lease
// released, or unrenewed for its duration as observed here) or a claim
// is released, until ctx ends, as Coordinator.Watch does with etcd. The
// watch stream also feeds the observations Sync judges liveness by, so
// a dead peer counts as gone one TTL after its last renewal, not after
// the next interval's read. changed must not block.
func (k *KubeCoordinator) Watch(ctx context.Context, changed func()) {
	for ctx.Err() == nil {
		k.watchOnce(ctx, changed)
		sleep(ctx, k.requestTimeout())
	}
}

func (k *KubeCoordinator) watchOnce(ctx context.Context, changed func()) {
	var ls leaseList
	if err := k.api.list(ctx, k.api.leases(), k.names.selector(""), &ls); err != nil {
		return
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	expired := make(chan struct{}, 1)
	timers := map[string]*time.Timer{}
	defer func() {
		for _, t := range timers {
			t.Stop()
		}
	}()
	for _, l := range ls.Items {
		k.watched(l, timers, expired, nil)
	}
	go func() {
		for {
			select {
			case <-wctx.Done():
				return
			case <-expired:
				changed()
			}
		}
	}()
	_ = k.api.watch(wctx, k.api.leases(), k.names.selector(""), ls.Metadata.ResourceVersion, func(ev watchEvent) error {
		var l kubeLease
		if ev.Type == "BOOKMARK" || json.Unmarshal(ev.Object, &l) != nil {
			return nil
		}
		if ev.Type == "DELETED" {
			k.obs.forget(l.Metadata.Name)
			changed()
			return nil
		}
		k.watched(l, timers, expired, changed)
		return nil
	})
}

// watched observes one Lease and says whether it is news to the group:
// a member's holder changed (joined, left, restarted) or a claim was
// released. A live member's expiry timer is reset at each renewal.
func (k *KubeCoordinator) watched(l kubeLease, timers map[string]*time.Timer, expired chan struct{}, changed func()) {
	name := l.Metadata.Name
	k.obs.mu.Lock()
	prev, known := k.obs.seen[name]
	k.obs.mu.Unlock()
	ob := k.obs.observe(l)
	role := l.Metadata.Labels[labelRole]
	own := l.Metadata.Annotations[annotationID] == k.cfg.Member && role == roleMember
	if changed != nil && !own && (!known || prev.holder != ob.holder) && (role == roleMember || ob.holder == "") {
		changed()
	}
	if role != roleMember || own {
		return
	}
	if t := timers[name]; t != nil {
		t.Stop()
	}
	if ob.holder != "" {
		timers[name] = time.AfterFunc(time.Until(ob.expires())+10*time.Millisecond, func() {
			select {
			case expired <- struct{}{}:
			default:
			}
		})
	}
}
