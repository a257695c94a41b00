package coord

import (
	"context"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Watch calls changed when another member registers or leaves (its lease
// expired or was revoked) or a claim is released, until ctx ends. The
// daemon starts a cycle then, so a dead peer's units are taken at once
// after etcd expires its lease, and a holder releases to a newcomer at
// once, instead of at the next interval. changed must not block; the
// caller merges calls. Claims taken and this member's own key are not
// watched: no Sync of a steady group writes what wakes another.
func (c *Coordinator) Watch(ctx context.Context, changed func()) {
	for ctx.Err() == nil {
		c.watchOnce(ctx, changed)
		// The watch ended (etcd unreachable, compacted): the intervals go
		// on meanwhile; try again without a burst of reconnects.
		sleep(ctx, max(c.cfg.TTL/4, 250*time.Millisecond))
	}
}

func (c *Coordinator) watchOnce(ctx context.Context, changed func()) {
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	members := c.cli.Watch(wctx, c.k.members(), clientv3.WithPrefix())
	released := c.cli.Watch(wctx, c.k.claims(), clientv3.WithPrefix(), clientv3.WithFilterPut())
	own := c.k.member(c.cfg.Member)
	for {
		var resp clientv3.WatchResponse
		var ok bool
		select {
		case resp, ok = <-members:
		case resp, ok = <-released:
		}
		if !ok || resp.Err() != nil {
			return
		}
		for _, ev := range resp.Events {
			if string(ev.Kv.Key) != own {
				changed()
				break
			}
		}
	}
}
