package coord

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Records keeps the engines' ownership record in etcd: one key per
// provider, record/<placement>/<uuid>, so that whichever engine holds a
// provider's unit next reads what the previous holder added. It does not
// know what an entry holds (engine.RecordStore).
//
// Writes are fenced like the cycle's Placement writes: a Records is made
// for one Assignment, and each of its transactions succeeds only while
// the member key is still bound to that assignment's lease, and is not
// sent at all once the lease may be about to expire. A paused engine that
// wakes after its lease expired is refused (ErrRecordFenced), and so
// writes nothing to Placement either.
type Records struct {
	cli    *clientv3.Client
	member string // the member key, bound to lease
	prefix string
	lease  *lease

	requests, bytes atomic.Int64
}

// ErrRecordFenced means a record write was refused: the lease it was made
// under may be gone, so a peer may hold the providers now.
var ErrRecordFenced = errors.New("record write refused: the etcd lease behind it may be gone")

// Limits of one transaction: etcd refuses more than 128 operations
// (--max-txn-ops) or 1.5 MiB (--max-request-bytes) by default.
const (
	recordOpsPerTxn   = 120
	recordBytesPerTxn = 1 << 20
	recordPageSize    = 2000
)

// Records is the record of the Placement named placement (its identity,
// not a URL spelling), written under a's lease.
func (c *Coordinator) Records(a Assignment, placement string) *Records {
	return &Records{cli: c.cli, member: c.k.member(c.cfg.Member), prefix: c.k.records(placement), lease: a.lease}
}

// RecordPrefix is where the record of placement lives under prefix, for
// etcdctl (backups, a deliberate reset).
func RecordPrefix(prefix, placement string) string { return newKeys(prefix).records(placement) }

func (k keys) records(placement string) string {
	sum := sha256.Sum256([]byte(placement))
	return fmt.Sprintf("%srecord/%x/", k.prefix, sum[:8])
}

// Stats are the requests sent and the key and value bytes written so far.
func (r *Records) Stats() (requests, bytes int64) { return r.requests.Load(), r.bytes.Load() }

// Load reads every entry, in pages.
func (r *Records) Load(ctx context.Context) (map[string][]byte, error) {
	out := map[string][]byte{}
	end := clientv3.GetPrefixRangeEnd(r.prefix)
	from := r.prefix
	for {
		r.requests.Add(1)
		resp, err := r.cli.Get(ctx, from, clientv3.WithRange(end), clientv3.WithLimit(recordPageSize))
		if err != nil {
			return nil, fmt.Errorf("etcd: read the record: %w", err)
		}
		for _, kv := range resp.Kvs {
			out[strings.TrimPrefix(string(kv.Key), r.prefix)] = kv.Value
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return out, nil
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// Store writes put and deletes del, in as few transactions as etcd's
// limits allow, each fenced by the lease. On an error some transactions
// may have landed: the caller stores the same entries again.
func (r *Records) Store(ctx context.Context, put map[string][]byte, del []string) error {
	var ops []clientv3.Op
	size := 0
	for _, uuid := range slices.Sorted(maps.Keys(put)) {
		op := clientv3.OpPut(r.prefix+uuid, string(put[uuid]))
		n := len(r.prefix) + len(uuid) + len(put[uuid])
		if len(ops) == recordOpsPerTxn || size+n > recordBytesPerTxn {
			if err := r.commit(ctx, ops, size); err != nil {
				return err
			}
			ops, size = nil, 0
		}
		ops, size = append(ops, op), size+n
	}
	for _, uuid := range del {
		if len(ops) == recordOpsPerTxn {
			if err := r.commit(ctx, ops, size); err != nil {
				return err
			}
			ops, size = nil, 0
		}
		ops, size = append(ops, clientv3.OpDelete(r.prefix+uuid)), size+len(r.prefix)+len(uuid)
	}
	if len(ops) == 0 {
		return nil
	}
	return r.commit(ctx, ops, size)
}

// commit sends one fenced transaction.
func (r *Records) commit(ctx context.Context, ops []clientv3.Op, size int) error {
	l := r.lease
	if l == nil || l.gone() || !time.Now().Before(l.validUntil()) {
		return ErrRecordFenced
	}
	tctx, cancel := context.WithDeadline(ctx, l.validUntil())
	defer cancel()
	r.requests.Add(1)
	r.bytes.Add(int64(size))
	resp, err := r.cli.Txn(tctx).If(clientv3.Compare(clientv3.LeaseValue(r.member), "=", l.id)).Then(ops...).Commit()
	switch {
	case err != nil && tctx.Err() != nil && ctx.Err() == nil:
		return fmt.Errorf("%w: %v", ErrRecordFenced, err)
	case err != nil:
		return fmt.Errorf("etcd: write the record: %w", err)
	case !resp.Succeeded:
		return ErrRecordFenced
	}
	return nil
}

// RecordedPlacement returns the identity of the Placement the fleet's
// record belongs to ("" if none is recorded yet) and the revision to pass
// to RecordPlacement.
func (c *Coordinator) RecordedPlacement(ctx context.Context) (id string, rev int64, err error) {
	resp, err := c.cli.Get(ctx, c.k.placement())
	if err != nil {
		return "", 0, fmt.Errorf("etcd: read the Placement identity: %w", err)
	}
	if len(resp.Kvs) == 0 {
		return "", 0, nil
	}
	return string(resp.Kvs[0].Value), resp.Kvs[0].ModRevision, nil
}

// RecordPlacement records id in place of what RecordedPlacement read at
// rev (0: nothing), and returns the identity recorded afterwards: another
// engine's, if it recorded first, so that every engine of the fleet keys
// the record alike.
func (c *Coordinator) RecordPlacement(ctx context.Context, id string, rev int64) (string, error) {
	key := c.k.placement()
	r, err := c.cli.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(key), "=", rev)).
		Then(clientv3.OpPut(key, id)).Else(clientv3.OpGet(key)).Commit()
	if err != nil {
		return "", fmt.Errorf("etcd: record the Placement identity: %w", err)
	}
	if r.Succeeded {
		return id, nil
	}
	if kvs := r.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
		return string(kvs[0].Value), nil
	}
	return "", errors.New("etcd: the Placement identity changed under this engine and vanished: try again")
}

// Reader reads what etcd says of one engine without registering it: the
// units its claims hold and the fleet's ownership record. It holds no
// lease and writes nothing, for a plan beside the engine's daemon.
type Reader struct{ c *Coordinator }

// OpenReader connects to etcd at endpoints with a, under prefix.
func OpenReader(endpoints []string, a Access, prefix string) (*Reader, error) {
	cli, err := dial(endpoints, a, 4*time.Second, nil)
	if err != nil {
		return nil, err
	}
	return &Reader{c: &Coordinator{cli: cli, k: newKeys(prefix)}}, nil
}

// Close releases the connection.
func (r *Reader) Close() { r.c.cli.Close() }

// Held lists the units member's claims hold now, sorted.
func (r *Reader) Held(ctx context.Context, member string) ([]string, error) {
	v, err := r.c.read(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for u, cl := range v.claims {
		if cl.holder == member {
			out = append(out, u)
		}
	}
	slices.Sort(out)
	return out, nil
}

// RecordedPlacement is the identity of the Placement the fleet's record
// belongs to, "" if none is recorded yet.
func (r *Reader) RecordedPlacement(ctx context.Context) (string, error) {
	id, _, err := r.c.RecordedPlacement(ctx)
	return id, err
}

// Records is the record of placement, read-only: Load reads it; Store
// refuses any write (ErrRecordFenced), there being no lease behind it.
func (r *Reader) Records(placement string) *Records {
	return &Records{cli: r.c.cli, prefix: r.c.k.records(placement)}
}
