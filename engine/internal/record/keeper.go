package record

import (
	"context"
	"fmt"

	"github.com/rpengine/rpengine/engine/placement"
)

// Store keeps the ownership record where whichever engine manages a
// provider next finds it: with [coord] etcd, in etcd under the fleet's
// prefix (internal/coord). Entries are opaque to it.
type Store interface {
	// Load returns every provider's stored entry, by uuid.
	Load(ctx context.Context) (map[string][]byte, error)
	// Store writes put and deletes del, in a bounded number of requests.
	// It fails once the writer may no longer hold what it writes for.
	Store(ctx context.Context, put map[string][]byte, del []string) error
}

// Ledger is the record's contents, kept by the engine (its State).
type Ledger interface {
	// Save writes the state file and fsyncs it (nothing without a path or
	// a change).
	Save() error
	// TakeShared hands over the entries changed since the last store:
	// put for those still known, del for those dropped; uuids are both,
	// given back by Reshare when the store fails.
	TakeShared() (put map[string][]byte, del, uuids []string)
	Reshare(uuids []string)
	// Paused says an operator paused the provider (engine pause): the
	// writers Intend hands out refuse every write to it.
	Paused(uuid string) bool
}

// Intent adds to the ledger what a run may add or create; shared is the
// store's entries when they were due to be read (nil otherwise), to
// merge first. It reports whether the ledger changed and so must be
// saved before any write.
type Intent func(shared map[string][]byte) (changed bool)

// Keeper is the ownership record: the state file (the Ledger's Save) and,
// with [coord], the shared Store. Its Intend hands out the only Writers.
// Not safe for concurrent use: one run at a time, as the engine runs.
type Keeper struct {
	pc     *placement.Client
	ledger Ledger
	store  Store
	reload bool // read the store before the next intent
	plan   bool // hands out recording writers and persists nothing
}

// New is the record kept in ledger, whose Writers send to pc.
func New(pc *placement.Client, ledger Ledger) *Keeper {
	return &Keeper{pc: pc, ledger: ledger}
}

// ForPlan is a plan's view of k over ledger (a copy of the state): it
// reads the store as k's next intent would, into ledger, hands out a
// recording Writer and stores nothing; k's read stays due.
func (k *Keeper) ForPlan(ledger Ledger) *Keeper {
	return &Keeper{pc: k.pc, ledger: ledger, store: k.store, reload: k.reload, plan: true}
}

// Share makes store hold the record from the next intent on (nil: the
// file alone). reload says the store must be read again before the next
// write (the engine was given nodes another may have written); the first
// store is always read.
func (k *Keeper) Share(store Store, reload bool) {
	k.reload = k.reload || reload || k.store == nil && store != nil
	k.store = store
}

// Shared says whether a store holds the record.
func (k *Keeper) Shared() bool { return k.store != nil }

// Reload makes the next Load or Intend read the store.
func (k *Keeper) Reload() { k.reload = k.store != nil }

// Load reads the store's entries when due (nil when not).
func (k *Keeper) Load(ctx context.Context) (map[string][]byte, error) {
	if k.store == nil || !k.reload {
		return nil, nil
	}
	raw, err := k.store.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the shared record: %w", err)
	}
	if raw == nil {
		raw = map[string][]byte{} // read, and empty
	}
	k.reload = false
	return raw, nil
}

// Entries is every entry the store holds now, or nil without a store.
func (k *Keeper) Entries(ctx context.Context) (map[string][]byte, error) {
	if k.store == nil {
		return nil, nil
	}
	return k.store.Load(ctx)
}

// Intend makes add's intent durable — the store read first when due, the
// file fsynced if add changed it, the changed entries stored — and then
// returns the Writer for the run's writes. On error nothing may be
// written. A plan's Keeper returns a recording Writer after add alone.
func (k *Keeper) Intend(ctx context.Context, add Intent) (Writer, error) {
	shared, err := k.Load(ctx)
	if err != nil {
		return nil, err
	}
	changed := add != nil && add(shared)
	if k.plan {
		return guarded{&plan{pc: k.pc}, k.paused}, nil
	}
	if changed {
		if err := k.ledger.Save(); err != nil {
			return nil, err
		}
	}
	if err := k.Flush(ctx); err != nil {
		return nil, fmt.Errorf("shared record: %w", err)
	}
	return guarded{sender{k.pc}, k.paused}, nil
}

// IntendPart is Intend for a run over a few providers (a node sync): its
// add takes from the store only their entries, so a read that was due
// stays due for the next run over all of them. Else a node sync just
// after a take-over's assignment took the read, and the cycle read each
// provider taken over from Placement instead.
func (k *Keeper) IntendPart(ctx context.Context, add Intent) (Writer, error) {
	due := k.reload
	w, err := k.Intend(ctx, add)
	k.reload = k.reload || due
	return w, err
}

// paused says whether the ledger holds uuid paused; a Keeper without a
// ledger (stand-down's) knows of no pause.
func (k *Keeper) paused(uuid string) bool { return k.ledger != nil && k.ledger.Paused(uuid) }

// Save writes the file alone, for what nothing written depends on yet
// (a cycle's round, a doubt before its reserve): the store gets it at
// the next Flush. A plan saves nothing.
func (k *Keeper) Save() error {
	if k.plan || k.ledger == nil {
		return nil
	}
	return k.ledger.Save()
}

// Flush stores the entries changed since the last store; a plan stores
// nothing. After the writes nothing depends on it yet, so a failure is
// the caller's to report; the entries are stored again next time.
func (k *Keeper) Flush(ctx context.Context) error {
	if k.store == nil || k.plan {
		return nil
	}
	put, del, uuids := k.ledger.TakeShared()
	if len(uuids) == 0 {
		return nil
	}
	if err := k.store.Store(ctx, put, del); err != nil {
		k.ledger.Reshare(uuids)
		return err
	}
	return nil
}
