package engine

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/rpengine/rpengine/engine/baremetal"
	"github.com/rpengine/rpengine/engine/internal/record"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/hostabi"
)

// Source is an inventory plugin as the engine sees it.
type Source interface {
	ListNodes(ctx context.Context, req hostabi.ListNodesRequest) ([]hostabi.Node, error)
	ListInstances(ctx context.Context) ([]hostabi.Instance, error)
}

// DeletionChecker is the optional capability of a source to prove that a
// node is gone. Without it the engine never deletes a provider.
type DeletionChecker interface {
	ConfirmDeleted(ctx context.Context, uuids []string) (deleted, present []string, err error)
}

// Supporter is a source that says which optional exports
// (hostabi.Export*) it has: a Wasm plugin knows only once loaded.
type Supporter interface {
	Supports(export string) bool
}

// ProvesDeletion returns src's proof of deletion if it has one: it is a
// DeletionChecker and, if it is a Supporter, supports confirm_deleted.
// The engine and every source wrapper ask this, and nothing else.
func ProvesDeletion(src Source) (DeletionChecker, bool) {
	dc, ok := src.(DeletionChecker)
	if s, says := src.(Supporter); ok && says {
		ok = s.Supports(hostabi.ExportConfirmDeleted)
	}
	return dc, ok
}

// Options tune how the engine writes.
type Options struct {
	// Concurrency bounds parallel provider syncs.
	Concurrency int
	// MaxAttempts bounds the tries per provider on conflicts.
	MaxAttempts int
	// DeleteGrace is the least time between the two proofs of a node's
	// deletion that a provider delete needs (0: two cycles suffice).
	DeleteGrace time.Duration
	// DeleteLimit is the largest fraction of owned providers one cycle may
	// delete; more is taken as a fault upstream and nothing is deleted.
	DeleteLimit float64
	// Progress, if set, is called as provider syncs finish, so a long
	// cold start (thousands of creates) can be reported.
	Progress func(done, total int)
	// Stop, if set, ends a cycle early once closed: no new provider sync
	// or deletion starts, and syncs under way finish, so a SIGTERM leaves
	// no provider half-written. The cycle reports what it skipped.
	Stop <-chan struct{}
	// Plugin names the inventory plugin (its describe name). Providers
	// are recorded with it, and a provider written for another plugin's
	// node is never deleted on this one's proof: after a plugin swap the
	// old plugin's providers are kept, not judged by a stranger.
	Plugin string
	// Clock tells the time for DeleteGrace; nil: the system clock.
	Clock Clock
	// Observer, if set, receives the engine's events (events.go), after
	// the engine's own log lines.
	Observer Observer
	// NewNames caps the custom traits and resource classes one cycle
	// creates (0: DefaultNewNames); the rest wait for later cycles.
	NewNames int
}

// Engine reconciles one source into one Placement.
type Engine struct {
	src   Source
	pc    *placement.Client
	pol   Policy
	opts  Options
	state *State
	log   *slog.Logger
	obs   Observers
	// What outlives a cycle besides the state; a cycle's own state is in
	// its cycle value (cycle.go).
	names *nameBook      // Placement's names learnt (names.go)
	holds holdBook       // beside nova: the holds placed (hold.go)
	quiet quiet          // providers left as they are while their generation holds (quiet.go)
	rec   *record.Keeper // the ownership record: the state file, and the shared store with [coord] (recordshare.go)
	spare spareDesired   // the last cycle's desired list, for the next (desired.go)
	order order          // node syncs beside a full cycle (order.go)
	// observe mode, scoped: the source's answers about providers of
	// unlisted nodes no engine owns (strangers_scoped.go)
	strangers strangerBook
}

// OwnerTraitPrefix starts every engine's owner marker trait.
const OwnerTraitPrefix = "CUSTOM_RPENGINE_OWNER_"

// OwnerTrait is the marker this engine puts on the providers it manages,
// so that after a restart with no local state it still knows its own.
func OwnerTrait(engineID string) string {
	return OwnerTraitPrefix + strings.TrimPrefix(baremetal.NormalizeResourceClass(engineID), "CUSTOM_")
}

// New builds an engine. state may come from LoadState; nil means an
// in-memory cache.
func New(src Source, pc *placement.Client, pol Policy, opts Options, state *State, log *slog.Logger) *Engine {
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = DefaultMaxAttempts
	}
	if opts.DeleteLimit <= 0 {
		opts.DeleteLimit = DefaultDeleteLimit
	}
	if opts.NewNames <= 0 {
		opts.NewNames = DefaultNewNames
	}
	if state == nil {
		state, _ = LoadState("", "")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	obs := Observers{LogObserver(log), opts.Observer}
	e := &Engine{src: src, pc: pc, pol: pol, opts: opts, state: state, log: log, obs: obs, names: newNameBook()}
	e.rec = record.New(pc, e.ledger(state))
	return e
}

// SetScope changes what the engine manages from the next cycle on, and
// whose providers it may take over: the coordinator of several engines
// calls it when the assignment changes. Not safe during a cycle.
func (e *Engine) SetScope(scope Scope, mayTakeOver func(owner string) bool) {
	e.pol.Scope, e.pol.MayTakeOver = scope, mayTakeOver
}

// State is the engine's provider cache.
func (e *Engine) State() *State { return e.state }
