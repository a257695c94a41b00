package coord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// lease is one registration of this member. Its claims live and die with
// it. until only grows while the lease lives.
type lease struct {
	id         clientv3.LeaseID
	ttl        time.Duration // as granted: etcd may raise a TTL below its minimum
	registered time.Time

	mu    sync.Mutex
	until time.Time     // the server cannot expire the lease before this
	lost  chan struct{} // closed once etcd said the lease is gone
}

// validUntil is how long claims made under l may be acted on: a quarter
// TTL before the earliest moment the server could expire the lease.
func (l *lease) validUntil() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.until.Add(-l.ttl / 4)
}

// extend records a keepalive answered with ttl that was sent at sent: the
// server renewed the lease after sent, so it lives at least until sent+ttl.
func (l *lease) extend(sent time.Time, ttl time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t := sent.Add(ttl); t.After(l.until) {
		l.until = t
	}
}

func (l *lease) gone() bool {
	select {
	case <-l.lost:
		return true
	default:
		return false
	}
}

// errIDTaken means another live process registered the same engine id.
type errIDTaken struct{ holder MemberInfo }

func (e errIDTaken) Error() string {
	return fmt.Sprintf("engine id %q is registered by another engine (host %s, pid %d, since %s): "+
		"two engines must never share an id", e.holder.ID, e.holder.Host, e.holder.PID,
		e.holder.Started.Format(time.RFC3339))
}

// session keeps this member registered: it grants a lease, creates
// members/<id> under it, renews it every quarter TTL, and registers again
// with a new lease when etcd says the old one is gone.
type session struct {
	cli  *clientv3.Client
	k    keys
	id   string
	ttl  time.Duration
	info func(clientv3.LeaseID) MemberInfo
	log  *slog.Logger

	mu      sync.Mutex
	current *lease // nil while unregistered
	err     error  // why the last registration failed
	changed chan struct{}
}

// run keeps the member registered until ctx ends.
func (s *session) run(ctx context.Context) {
	for ctx.Err() == nil {
		l, err := s.register(ctx)
		s.set(l, err)
		if err != nil {
			s.log.Warn("etcd registration failed; retrying", "err", err)
			sleep(ctx, s.ttl/4)
			continue
		}
		s.log.Info("registered in etcd", "member", s.id, "lease", fmt.Sprintf("%x", int64(l.id)), "ttl", l.ttl)
		s.keepAlive(ctx, l)
		close(l.lost)
		s.set(nil, errors.New("lease lost; registering again"))
	}
}

func (s *session) set(l *lease, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.current, s.err = l, err
	close(s.changed)
	s.changed = make(chan struct{})
}

// lease returns the live registration, or why there is none, and a
// channel closed at the next change.
func (s *session) lease() (*lease, <-chan struct{}, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current == nil && s.err == nil {
		return nil, s.changed, errors.New("not registered in etcd yet")
	}
	return s.current, s.changed, s.err
}

func (s *session) register(ctx context.Context) (*lease, error) {
	rctx, cancel := context.WithTimeout(ctx, s.requestTimeout())
	defer cancel()
	sent := time.Now()
	g, err := s.cli.Grant(rctx, int64((s.ttl+time.Second-1)/time.Second))
	if err != nil {
		return nil, fmt.Errorf("grant lease: %w", err)
	}
	l := &lease{id: g.ID, ttl: time.Duration(g.TTL) * time.Second, registered: sent, lost: make(chan struct{})}
	l.extend(sent, l.ttl)
	val, _ := json.Marshal(s.info(g.ID))
	key := s.k.member(s.id)
	r, err := s.cli.Txn(rctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, string(val), clientv3.WithLease(g.ID))).
		Else(clientv3.OpGet(key)).Commit()
	if err == nil && !r.Succeeded {
		var holder MemberInfo
		if kvs := r.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
			_ = json.Unmarshal(kvs[0].Value, &holder)
		}
		err = errIDTaken{holder}
	}
	if err != nil {
		// Not ours to keep: the key or the lease would linger a TTL.
		rv, cancel := context.WithTimeout(context.Background(), s.requestTimeout())
		defer cancel()
		_, _ = s.cli.Revoke(rv, g.ID)
		return nil, err
	}
	return l, nil
}

// keepAlive renews l every quarter TTL until etcd says it is gone or ctx
// ends. Each renewal extends l.until from the time it was sent, never from
// the time the answer came, so a slow answer cannot overstate the lease.
func (s *session) keepAlive(ctx context.Context, l *lease) {
	period := l.ttl / 4
	failing := false
	for sleep(ctx, period) {
		rctx, cancel := context.WithTimeout(ctx, period)
		sent := time.Now()
		r, err := s.cli.KeepAliveOnce(rctx, l.id)
		cancel()
		switch {
		case errors.Is(err, rpctypes.ErrLeaseNotFound) || err == nil && r.TTL <= 0:
			s.log.Warn("etcd lease expired: claims lost", "member", s.id)
			return
		case err != nil:
			if !failing {
				s.log.Warn("etcd keepalive failing; writes stop when the lease may end",
					"err", err, "writes_until", l.validUntil().Format(time.RFC3339Nano))
			}
			failing = true
		default:
			if failing {
				s.log.Info("etcd keepalive works again")
			}
			failing = false
			l.extend(sent, time.Duration(r.TTL)*time.Second)
		}
	}
}

// requestTimeout bounds one etcd request: a quarter TTL, the keepalive
// period, so a hung request cannot outlast the validity it checks.
func (s *session) requestTimeout() time.Duration { return max(s.ttl/4, 250*time.Millisecond) }

// sleep waits d or until ctx ends; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
