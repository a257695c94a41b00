package daemon

import (
	"context"
	"time"

	sd "github.com/coreos/go-systemd/v22/daemon"
)

// notify tells systemd (Type=notify) how the daemon stands; outside
// systemd (no NOTIFY_SOCKET) it does nothing.
func (l *Loop) notify(state string) {
	if _, err := sd.SdNotify(false, state); err != nil {
		l.Log.Warn("systemd notify failed", "state", state, "err", err)
	}
}

// watchdog pats systemd's watchdog (WatchdogSec=) at half its period
// while the loop is live (ops.Ops.Live): a loop stuck past
// server.unhealthy_after+1 intervals stops the pats and systemd restarts
// the daemon. An outage of Ironic or Placement does not stop them.
func (l *Loop) watchdog(ctx context.Context) {
	every, err := sd.SdWatchdogEnabled(false)
	if err != nil || every <= 0 {
		return
	}
	t := time.NewTicker(every / 2)
	defer t.Stop()
	wasLive := true
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		wasLive = l.pat(wasLive)
	}
}

// pat sends one watchdog keep-alive if the loop is live, and logs when
// liveness is lost or regained; it returns whether the loop is live.
func (l *Loop) pat(wasLive bool) bool {
	live, why := l.Ops.Live()
	switch {
	case live:
		l.notify(sd.SdNotifyWatchdog)
		if !wasLive {
			l.Log.Info("watchdog: the loop is live again", "why", why)
		}
	case wasLive:
		l.Log.Error("watchdog: the loop is not live; no keep-alive sent, systemd will restart the daemon", "why", why)
	}
	return live
}
