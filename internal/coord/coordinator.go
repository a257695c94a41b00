package coord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Config of a Coordinator.
type Config struct {
	Endpoints  []string
	Access     Access        // TLS and user (dial.go)
	Prefix     string        // the engines of one fleet share it
	Member     string        // the engine id: unique under Prefix
	OwnerTrait string        // the engine's owner marker trait
	TTL        time.Duration // lease TTL asked for; etcd may grant more
	Division   Division      // what live members divide; zero: static mode
	Static     []string      // static mode: this member's units (StaticUnits)
	Log        *slog.Logger
	// RegisterWait bounds New's wait for the first registration, which may
	// have to outwait the lease of a previous process with the same id.
	// Zero: two TTLs and five seconds.
	RegisterWait time.Duration
}

// Coordinator is one engine's membership. Sync and Close must not run at
// the same time as each other; Fence contexts may outlive a Sync.
type Coordinator struct {
	cfg  Config
	k    keys
	cli  *clientv3.Client
	s    *session
	stop context.CancelFunc
	done chan struct{}
	log  *slog.Logger

	requests atomic.Int64 // calls to etcd (dial's count)

	mu      sync.Mutex
	holders map[string]string // unit → holder at the last Sync, for moves
	moves   []Move
}

// New connects to etcd and registers the member, waiting until it is
// registered or RegisterWait passes.
func New(ctx context.Context, cfg Config) (*Coordinator, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.RegisterWait == 0 {
		cfg.RegisterWait = 2*cfg.TTL + 5*time.Second
	}
	c := &Coordinator{cfg: cfg, k: newKeys(cfg.Prefix), done: make(chan struct{}), log: cfg.Log}
	cli, err := dial(cfg.Endpoints, cfg.Access, cfg.TTL, &c.requests)
	if err != nil {
		return nil, err
	}
	c.cli = cli
	host, _ := os.Hostname()
	started := time.Now().UTC()
	c.s = &session{cli: cli, k: c.k, id: cfg.Member, ttl: cfg.TTL, log: cfg.Log, changed: make(chan struct{}),
		info: func(id clientv3.LeaseID) MemberInfo {
			return MemberInfo{ID: cfg.Member, Host: host, PID: os.Getpid(), Started: started,
				Division: cfg.Division.String(), Lease: fmt.Sprintf("%x", int64(id))}
		}}
	runCtx, stop := context.WithCancel(context.Background())
	c.stop = stop
	go func() { defer close(c.done); c.s.run(runCtx) }()
	if err := c.waitRegistered(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *Coordinator) waitRegistered(ctx context.Context) error {
	deadline := time.NewTimer(c.cfg.RegisterWait)
	defer deadline.Stop()
	for {
		l, changed, err := c.s.lease()
		if l != nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("etcd %v: not registered after %s: %w", c.cfg.Endpoints, c.cfg.RegisterWait, err)
		case <-changed:
		}
	}
}

// Assignment is what Sync found and did. Held is what the engine may
// manage until its Fence context ends.
type Assignment struct {
	Members  []string // live members of this division, this one included
	Target   []string // the units rendezvous gives this member
	Held     []string // the units this member holds now
	Waiting  []string // in Target, still held by another member
	Acquired []string // by this Sync
	Released []string // by this Sync

	lease    *lease
	takeover map[string]bool // owner traits that may be taken over
	claimed  map[string]int  // Kubernetes: held unit → its Lease's leaseTransitions
}

// MayTakeOver says whether a provider marked with owner may be taken:
// only from another engine of this division. It is called only for nodes
// of units this member holds, and a unit has one holder, so that engine
// no longer holds the node. Safe for concurrent use.
func (a Assignment) MayTakeOver(owner string) bool { return a.takeover[owner] }

// Sync runs between cycles: it reads members and claims, releases the
// claims the assignment moved away, acquires free claims the assignment
// gives this member, and returns what it holds. A member that just
// registered first waits one TTL, so engines started together see each
// other before anyone claims.
func (c *Coordinator) Sync(ctx context.Context) (Assignment, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, _, err := c.s.lease()
	if l == nil {
		return Assignment{}, fmt.Errorf("etcd: %w", err)
	}
	if c.cfg.Division.Dynamic() && !sleep(ctx, time.Until(l.registered.Add(l.ttl))) {
		return Assignment{}, ctx.Err()
	}
	if !time.Now().Before(l.validUntil()) {
		return Assignment{}, errors.New("etcd lease not renewed in time: holding nothing until it is")
	}
	rctx, cancel := context.WithDeadline(ctx, l.validUntil())
	defer cancel()
	v, err := c.read(rctx)
	if err != nil {
		return Assignment{}, err
	}
	a := Assignment{lease: l}
	if err := c.remember(rctx, v); err != nil {
		return a, err
	}
	target, err := c.target(v, &a)
	if err != nil {
		c.releaseAll(rctx, v, l)
		return a, err
	}
	a.Target = target
	if err := c.apply(rctx, v, l, &a); err != nil {
		return a, err
	}
	if l.gone() || !time.Now().Before(l.validUntil()) {
		return Assignment{}, errors.New("etcd lease lost during sync: holding nothing")
	}
	return a, nil
}

// target is the units this member should hold. In the dynamic mode all
// live members must agree on the division; one that does not would give
// the same unit name to other nodes, so nothing is held until it leaves.
func (c *Coordinator) target(v view, a *Assignment) ([]string, error) {
	div := c.cfg.Division.String()
	a.takeover = map[string]bool{}
	for id, s := range v.seen {
		if _, live := v.members[id]; live && id != c.cfg.Member && s.OwnerTrait == c.cfg.OwnerTrait && s.OwnerTrait != "" {
			// e.g. "rack-a" and "rack_a": one marker for two live engines.
			return nil, fmt.Errorf("engine ids %q and %q give the same owner marker %s: rename one", id, c.cfg.Member, s.OwnerTrait)
		}
		if id != c.cfg.Member && s.Division == div && s.OwnerTrait != "" {
			a.takeover[s.OwnerTrait] = true
		}
	}
	if !c.cfg.Division.Dynamic() {
		a.Members = []string{c.cfg.Member}
		return c.cfg.Static, nil
	}
	for id, m := range v.members {
		if m.Division != div {
			return nil, fmt.Errorf("member %q divides by %q, this one by %q: holding nothing until they agree", id, m.Division, div)
		}
		a.Members = append(a.Members, id)
	}
	return Of(Assign(a.Members, c.cfg.Division.Units()), c.cfg.Member), nil
}

// Fence returns the context a cycle must run under: it ends when the lease
// behind a's claims may be about to expire (a quarter TTL before the
// earliest expiry etcd could apply) or is gone, whichever comes first.
func (c *Coordinator) Fence(parent context.Context, a Assignment) (context.Context, context.CancelFunc) {
	return fence(parent, a.lease, errFenced, func() {
		c.log.Warn("etcd lease not renewed in time: cycle cancelled, no more writes", "member", c.cfg.Member)
	})
}

var errFenced = errors.New("fenced: the etcd lease may expire; claims no longer proven")

// Close ends the membership: it revokes the lease, which drops the
// member's claims at once so peers need not wait for a TTL. Call it only
// after the last cycle ended.
func (c *Coordinator) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, _, _ := c.s.lease()
	c.stop()
	<-c.done
	if l != nil {
		ctx, cancel := context.WithTimeout(context.Background(), c.s.requestTimeout())
		if _, err := c.cli.Revoke(ctx, l.id); err != nil {
			c.log.Warn("etcd lease not revoked; peers take over when it expires", "err", err)
		}
		cancel()
	}
	c.cli.Close()
}

// Requests is how many calls this member made to etcd: unary calls and
// streams opened (watches, the lease's keep-alive).
func (c *Coordinator) Requests() int64 { return c.requests.Load() }
