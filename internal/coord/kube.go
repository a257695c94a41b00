package coord

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// KubeAccess says how to reach the Kubernetes API server.
type KubeAccess struct {
	Kubeconfig string // a kubeconfig file; "" means the pod's service account
	Namespace  string // "" means the kubeconfig context's, else the pod's
}

// KubeCoordinator is one engine's membership through the Kubernetes API:
// the Coordinator's protocol with Leases in place of etcd's leases and
// keys (docs/SCALEOUT.md, "Kubernetes"). Sync and Close must not run at
// the same time as each other; Fence contexts may outlive a Sync.
type KubeCoordinator struct {
	cfg   Config
	api   *kubeAPI
	names kubeNames
	obs   *observations
	s     *kubeSession
	log   *slog.Logger
	stop  context.CancelFunc
	done  chan struct{}
	base  *Coordinator // its pure parts: the target and the overlap rule

	mu      sync.Mutex
	holders map[string]string // unit → holder at the last Sync, for moves
	ident   string            // the placement identity's resourceVersion
	recs    recordCache
	moves   []Move
	// wallClock judges peers by renewTime against this clock, for a
	// one-off status read that cannot watch a Lease for its duration.
	wallClock bool
}

// NewKube connects to the API server and registers the member, waiting
// until it is registered or RegisterWait passes. cfg.Endpoints is unused.
func NewKube(ctx context.Context, cfg Config, access KubeAccess) (*KubeCoordinator, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.RegisterWait == 0 {
		cfg.RegisterWait = 2*cfg.TTL + 5*time.Second
	}
	if cfg.TTL < time.Second || cfg.TTL%time.Second != 0 {
		return nil, fmt.Errorf("kubernetes: lease TTL %s: Leases count whole seconds, at least 1", cfg.TTL)
	}
	api, err := dialKube(access.Kubeconfig, access.Namespace, cfg.TTL)
	if err != nil {
		return nil, err
	}
	k := &KubeCoordinator{cfg: cfg, api: api, names: newKubeNames(cfg.Prefix), obs: newObservations(), recs: recordCache{cache: map[string]kubeConfigMap{}},
		log: cfg.Log, done: make(chan struct{}), base: &Coordinator{cfg: cfg, log: cfg.Log}}
	k.s = &kubeSession{k: k, changed: make(chan struct{})}
	runCtx, stop := context.WithCancel(context.Background())
	k.stop = stop
	go func() { defer close(k.done); k.s.run(runCtx) }()
	if err := k.waitRegistered(ctx); err != nil {
		k.Close()
		return nil, err
	}
	return k, nil
}

func (k *KubeCoordinator) waitRegistered(ctx context.Context) error {
	deadline := time.NewTimer(k.cfg.RegisterWait)
	defer deadline.Stop()
	for {
		h, changed, err := k.s.current()
		if h != nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("kubernetes %s: not registered after %s: %w", k.api.base, k.cfg.RegisterWait, err)
		case <-changed:
		}
	}
}

// Requests is how many requests this member sent to the API server.
func (k *KubeCoordinator) Requests() int64 { return k.api.requests.Load() }

// Fence returns the context a cycle must run under: it ends when the
// member Lease behind a's claims may be taken by a peer (a quarter TTL
// before a peer's clock could count it expired) or was lost.
func (k *KubeCoordinator) Fence(parent context.Context, a Assignment) (context.Context, context.CancelFunc) {
	return fence(parent, a.lease, errKubeFenced, func() {
		k.log.Warn("kubernetes Lease not renewed in time: cycle cancelled, no more writes", "member", k.cfg.Member)
	})
}

var errKubeFenced = errors.New("fenced: the member Lease may be taken; claims no longer proven")

// Close ends the membership: it empties the member Lease's holder, which
// ends the member's claims at once so peers need not wait for a TTL.
// Call it only after the last cycle ended.
func (k *KubeCoordinator) Close() {
	k.mu.Lock()
	defer k.mu.Unlock()
	h, _, _ := k.s.current()
	k.stop()
	<-k.done
	if h != nil {
		ctx, cancel := context.WithTimeout(context.Background(), k.requestTimeout())
		if err := k.s.release(ctx, h); err != nil {
			k.log.Warn("kubernetes member Lease not released; peers take over when it expires", "err", err)
		}
		cancel()
	}
	k.api.hc.CloseIdleConnections()
}

// requestTimeout bounds one request: a quarter TTL, the renewal period.
func (k *KubeCoordinator) requestTimeout() time.Duration {
	return max(k.cfg.TTL/4, 250*time.Millisecond)
}

// memberInfo is what the member Lease says of this process.
func (k *KubeCoordinator) memberInfo(holder string) MemberInfo {
	host, _ := os.Hostname()
	return MemberInfo{ID: k.cfg.Member, Host: host, PID: os.Getpid(), Started: startedAt,
		Division: k.cfg.Division.String(), Lease: holder}
}

var startedAt = time.Now().UTC()

// newHolder is a holder identity for one registration: the member id and
// a nonce, so that claims made under an earlier registration of the same
// id (a crashed process, or this one before its Lease lapsed) are told
// apart and never count as this one's.
func newHolder(id string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return id + "#" + hex.EncodeToString(b)
}
