package coord

import (
	"context"
	"errors"
	"time"
)

// fence is the context a cycle runs under, for etcd and Kubernetes alike:
// it ends with cause fenced when l's claims are no longer proven (at
// l.validUntil, after warn; or as soon as l is lost), and with
// context.Canceled when the returned cancel is called.
func fence(parent context.Context, l *lease, fenced error, warn func()) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	if l == nil {
		cancel(errors.New("fenced: no lease"))
		return ctx, func() { cancel(context.Canceled) }
	}
	go func() {
		for {
			d := time.Until(l.validUntil())
			if d <= 0 {
				warn()
				cancel(fenced)
				return
			}
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-l.lost:
				t.Stop()
				cancel(fenced)
				return
			case <-ctx.Done():
				t.Stop()
				return
			}
		}
	}()
	return ctx, func() { cancel(context.Canceled) }
}
