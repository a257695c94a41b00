package coord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// observations is when this process last saw each Lease change. A Lease
// has no expiry on the server: a peer counts as gone once this process
// has seen its Lease unchanged for its leaseDurationSeconds, by its own
// monotonic clock, never by comparing renewTime with its wall clock.
type observations struct {
	mu   sync.Mutex
	seen map[string]observed // Lease name → last change seen
}

type observed struct {
	rv, holder string
	at         time.Time // local: when the change was first seen
	dur        time.Duration
}

func newObservations() *observations { return &observations{seen: map[string]observed{}} }

// observe records l as seen now, and returns its observation.
func (o *observations) observe(l kubeLease) observed {
	o.mu.Lock()
	defer o.mu.Unlock()
	prev, ok := o.seen[l.Metadata.Name]
	if ok && prev.rv == l.Metadata.ResourceVersion {
		return prev
	}
	ob := observed{rv: l.Metadata.ResourceVersion, holder: l.Spec.HolderIdentity, at: time.Now(),
		dur: time.Duration(l.Spec.LeaseDurationSeconds) * time.Second}
	o.seen[l.Metadata.Name] = ob
	return ob
}

func (o *observations) forget(name string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.seen, name)
}

// live says whether the holder of a Lease as observed may still be acting.
func (ob observed) live() bool { return ob.holder != "" && time.Since(ob.at) < ob.dur }

// expires is when ob stops being live, if nothing changes.
func (ob observed) expires() time.Time { return ob.at.Add(ob.dur) }

// kubeHold is one registration: this process holds the member Lease.
type kubeHold struct {
	*lease
	holder      string
	transitions int

	mu  sync.Mutex
	obj kubeLease // as last written
}

// kubeSession keeps the member registered: it takes the member Lease,
// renews it every quarter TTL, and registers again (a new holder) when
// the Lease was taken or a renewal came too late to prove it.
type kubeSession struct {
	k       *KubeCoordinator
	prev    string // the holder of the last registration, which this process may retake at once
	mu      sync.Mutex
	cur     *kubeHold
	err     error
	changed chan struct{}
}

func (s *kubeSession) run(ctx context.Context) {
	for ctx.Err() == nil {
		h, err := s.register(ctx)
		s.set(h, err)
		if err != nil {
			s.k.log.Warn("kubernetes registration failed; retrying", "err", err)
			sleep(ctx, s.k.cfg.TTL/4)
			continue
		}
		s.k.log.Info("registered through Kubernetes", "member", s.k.cfg.Member, "holder", h.holder,
			"lease", h.obj.Metadata.Name, "ttl", h.ttl)
		s.prev = h.holder
		s.keepAlive(ctx, h)
		close(h.lost)
		s.set(nil, errors.New("member Lease lost; registering again"))
	}
}

func (s *kubeSession) set(h *kubeHold, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cur, s.err = h, err
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *kubeSession) current() (*kubeHold, <-chan struct{}, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil && s.err == nil {
		return nil, s.changed, errors.New("not registered through Kubernetes yet")
	}
	return s.cur, s.changed, s.err
}

// register takes the member Lease: creates it, or takes it when nobody
// holds it, when this process held it last, or when its holder has not
// renewed it for its duration as this process observed.
func (s *kubeSession) register(ctx context.Context) (*kubeHold, error) {
	k := s.k
	rctx, cancel := context.WithTimeout(ctx, k.requestTimeout())
	defer cancel()
	name := k.names.member(k.cfg.Member)
	var cur kubeLease
	err := k.api.do(rctx, http.MethodGet, k.api.leases()+"/"+name, nil, &cur)
	if err != nil && !errors.Is(err, errNotFound) {
		return nil, err
	}
	exists := err == nil
	if exists {
		ob := k.obs.observe(cur)
		if h := cur.Spec.HolderIdentity; h != "" && h != s.prev && ob.live() {
			var info MemberInfo
			_ = json.Unmarshal([]byte(cur.Metadata.Annotations[annotationInfo]), &info)
			info.ID = k.cfg.Member
			return nil, errIDTaken{info}
		}
	}
	return s.take(rctx, name, cur, exists)
}

func (s *kubeSession) take(ctx context.Context, name string, cur kubeLease, exists bool) (*kubeHold, error) {
	k := s.k
	holder := newHolder(k.cfg.Member)
	info, _ := json.Marshal(k.memberInfo(holder))
	seen, _ := json.Marshal(Seen{OwnerTrait: k.cfg.OwnerTrait, Division: k.cfg.Division.String()})
	l := cur
	l.APIVersion, l.Kind = "coordination.k8s.io/v1", "Lease"
	l.Metadata.Name, l.Metadata.Labels = name, k.names.labels(roleMember)
	l.Metadata.Annotations = map[string]string{annotationID: k.cfg.Member, annotationInfo: string(info), annotationSeen: string(seen)}
	sent := now()
	l.Spec = leaseSpec{HolderIdentity: holder, LeaseDurationSeconds: int(k.cfg.TTL / time.Second),
		AcquireTime: sent, RenewTime: sent, LeaseTransitions: cur.Spec.LeaseTransitions}
	var out kubeLease
	var err error
	if exists {
		l.Spec.LeaseTransitions++
		err = k.api.do(ctx, http.MethodPut, k.api.leases()+"/"+name, l, &out)
	} else {
		err = k.api.do(ctx, http.MethodPost, k.api.leases(), l, &out)
	}
	if err != nil {
		return nil, fmt.Errorf("take member Lease %s: %w", name, err)
	}
	h := &kubeHold{lease: &lease{ttl: k.cfg.TTL, registered: sent.Time, lost: make(chan struct{})},
		holder: holder, transitions: out.Spec.LeaseTransitions, obj: out}
	h.extend(sent.Time, k.cfg.TTL)
	return h, nil
}

// keepAlive renews h every quarter TTL until it is lost or ctx ends. A
// renewal extends h from the time it was sent. Once h's validity has run
// out, the registration ends even if a late renewal would still succeed:
// a peer may have taken its claims meanwhile, so they are never acted on
// again (the next registration has another holder).
func (s *kubeSession) keepAlive(ctx context.Context, h *kubeHold) {
	period := h.ttl / 4
	failing := false
	for sleep(ctx, period) {
		if !time.Now().Before(h.validUntil()) {
			s.k.log.Warn("kubernetes member Lease not renewed in time: claims lost", "member", s.k.cfg.Member)
			return
		}
		rctx, cancel := context.WithDeadline(ctx, h.validUntil())
		sent := time.Now()
		err := s.renew(rctx, h, sent)
		cancel()
		switch {
		case errors.Is(err, errConflict) || errors.Is(err, errNotFound) || errors.Is(err, errLeaseTaken):
			s.k.log.Warn("kubernetes member Lease taken or gone: claims lost", "member", s.k.cfg.Member, "err", err)
			return
		case err != nil:
			if !failing {
				s.k.log.Warn("kubernetes renewal failing; writes stop when a peer may take over",
					"err", err, "writes_until", h.validUntil().Format(time.RFC3339Nano))
			}
			failing = true
		default:
			if failing {
				s.k.log.Info("kubernetes renewal works again")
			}
			failing = false
			h.extend(sent, h.ttl)
		}
	}
}

var errLeaseTaken = errors.New("member Lease has another holder")

// renew writes renewTime with the last resourceVersion as precondition:
// a Lease another process took in between fails with a conflict.
func (s *kubeSession) renew(ctx context.Context, h *kubeHold, sent time.Time) error {
	h.mu.Lock()
	l := h.obj
	h.mu.Unlock()
	l.Spec.RenewTime = &microTime{sent}
	var out kubeLease
	if err := s.k.api.do(ctx, http.MethodPut, s.k.api.leases()+"/"+l.Metadata.Name, l, &out); err != nil {
		return err
	}
	if out.Spec.HolderIdentity != h.holder || out.Spec.LeaseTransitions != h.transitions {
		return errLeaseTaken
	}
	h.mu.Lock()
	h.obj = out
	h.mu.Unlock()
	return nil
}

// release empties the member Lease's holder, if still h's: its claims end.
func (s *kubeSession) release(ctx context.Context, h *kubeHold) error {
	h.mu.Lock()
	l := h.obj
	h.mu.Unlock()
	if !strings.HasPrefix(l.Spec.HolderIdentity, s.k.cfg.Member+"#") {
		return nil
	}
	l.Spec.HolderIdentity = ""
	return s.k.api.do(ctx, http.MethodPut, s.k.api.leases()+"/"+l.Metadata.Name, l, nil)
}
