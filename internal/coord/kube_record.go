package coord

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// recordBuckets is how many ConfigMaps hold one Placement's record. The
// record is keyed by provider uuid and the store is not told a
// provider's unit (a shard is not a function of the uuid), so entries
// are spread by a hash of the uuid: 64 objects keep 100,000 providers'
// entries (about 150 bytes each) near 250 KB an object, under the API
// server's 1 MiB.
const recordBuckets = 64

// KubeRecords keeps the ownership record in ConfigMaps, one per bucket,
// each written with its resourceVersion as precondition, so two engines
// writing one bucket merge instead of losing an entry; a delete removes
// an entry only as this engine last saw it, never one another engine
// wrote since. Writes are fenced:
// before each Store the writer re-reads its member Lease and its claim
// Leases (holder and leaseTransitions, one list) and writes nothing if
// any changed or its validity may have run out (ErrRecordFenced).
type KubeRecords struct {
	k         *KubeCoordinator
	placement string
	hold      *kubeHold // nil: read-only
	claimed   map[string]int

	*recordCache

	requests, bytes atomic.Int64
}

// Records is the record of the Placement named placement, written under
// a's claims.
func (k *KubeCoordinator) Records(a Assignment, placement string) *KubeRecords {
	h, _, _ := k.s.current()
	if h == nil || h.lease != a.lease {
		h = nil
	}
	return &KubeRecords{k: k, placement: placement, hold: h, claimed: a.claimed, recordCache: &k.recs}
}

// Stats are the requests sent and the entry bytes written so far.
func (r *KubeRecords) Stats() (requests, bytes int64) { return r.requests.Load(), r.bytes.Load() }

func (r *KubeRecords) selector() string {
	return r.k.names.selector(roleRecord) + "," + labelPlacement + "=" + short(r.placement)
}

// Load reads every entry, in one list.
func (r *KubeRecords) Load(ctx context.Context) (map[string][]byte, error) {
	var ls configMapList
	r.requests.Add(1)
	if err := r.k.api.list(ctx, r.k.api.configMaps(), r.selector(), &ls); err != nil {
		return nil, fmt.Errorf("kubernetes: read the record: %w", err)
	}
	out := map[string][]byte{}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, cm := range ls.Items {
		r.cache[cm.Metadata.Name] = cm
		maps.Copy(out, cm.BinaryData)
	}
	return out, nil
}

// recordCache is every bucket as last read or written by this member,
// kept across cycles so a steady write costs one request, not three.
type recordCache struct {
	mu    sync.Mutex
	cache map[string]kubeConfigMap // bucket name → its object
}

func bucketOf(uuid string) int {
	h := fnv.New32a()
	h.Write([]byte(uuid))
	return int(h.Sum32() % recordBuckets)
}

// Store writes put and deletes del: one write per bucket touched, after
// the fence check. On an error some buckets may have been written: the
// caller stores the same entries again.
func (r *KubeRecords) Store(ctx context.Context, put map[string][]byte, del []string) error {
	if len(put)+len(del) == 0 {
		return nil
	}
	if err := r.fence(ctx); err != nil {
		return err
	}
	tctx, cancel := context.WithDeadline(ctx, r.hold.validUntil())
	defer cancel()
	changes := map[int]func(map[string][]byte){}
	for _, uuid := range slices.Sorted(maps.Keys(put)) {
		b := bucketOf(uuid)
		prev := changes[b]
		changes[b] = func(m map[string][]byte) { call(prev, m); m[uuid] = put[uuid] }
	}
	for _, uuid := range del {
		b := bucketOf(uuid)
		prev, seen := changes[b], r.lastSeen(b, uuid)
		changes[b] = func(m map[string][]byte) {
			call(prev, m)
			// Only the entry as this engine last saw it: one another
			// engine wrote since is that engine's to keep.
			if cur, ok := m[uuid]; ok && bytes.Equal(cur, seen) {
				delete(m, uuid)
			}
		}
	}
	for _, b := range slices.Sorted(maps.Keys(changes)) {
		if err := r.write(tctx, b, changes[b]); err != nil {
			if tctx.Err() != nil && ctx.Err() == nil {
				return fmt.Errorf("%w: %v", ErrRecordFenced, err)
			}
			return err
		}
	}
	return nil
}

// lastSeen is uuid's entry in bucket b as last read or written here.
func (r *KubeRecords) lastSeen(b int, uuid string) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cache[r.k.names.record(r.placement, b)].BinaryData[uuid]
}

func call(f func(map[string][]byte), m map[string][]byte) {
	if f != nil {
		f(m)
	}
}

// fence re-reads the member's Leases: the member Lease must still have
// this registration's holder and transitions, and each held claim the
// holder and transitions it had when taken.
func (r *KubeRecords) fence(ctx context.Context) error {
	h := r.hold
	if h == nil || h.gone() || !time.Now().Before(h.validUntil()) {
		return ErrRecordFenced
	}
	fctx, cancel := context.WithDeadline(ctx, h.validUntil())
	defer cancel()
	var ls leaseList
	r.requests.Add(1)
	if err := r.k.api.list(fctx, r.k.api.leases(), r.k.names.selector(""), &ls); err != nil {
		return fmt.Errorf("%w: re-read the claims: %v", ErrRecordFenced, err)
	}
	ok := map[string]bool{}
	for _, l := range ls.Items {
		s := l.Spec
		switch l.Metadata.Labels[labelRole] {
		case roleMember:
			if l.Metadata.Name == r.k.names.member(r.k.cfg.Member) {
				ok[""] = s.HolderIdentity == h.holder && s.LeaseTransitions == h.transitions
			}
		case roleClaim:
			u := l.Metadata.Annotations[annotationID]
			t, held := r.claimed[u]
			ok[u] = held && s.HolderIdentity == h.holder && s.LeaseTransitions == t
		}
	}
	if !ok[""] {
		return fmt.Errorf("%w: the member Lease has another holder", ErrRecordFenced)
	}
	for u := range r.claimed {
		if !ok[u] {
			return fmt.Errorf("%w: the claim of %s changed hands", ErrRecordFenced, u)
		}
	}
	return nil
}

// write applies change to one bucket, retrying on a conflict with what
// the other writer left.
func (r *KubeRecords) write(ctx context.Context, bucket int, change func(map[string][]byte)) error {
	name := r.k.names.record(r.placement, bucket)
	for try := 0; ; try++ {
		r.mu.Lock()
		cm, cached := r.cache[name]
		r.mu.Unlock()
		if !cached {
			cm = r.newBucket(name)
		}
		data := maps.Clone(cm.BinaryData)
		if data == nil {
			data = map[string][]byte{}
		}
		change(data)
		next := cm
		next.BinaryData = data
		err := r.send(ctx, next, cached && cm.Metadata.ResourceVersion != "")
		if err == nil || !errors.Is(err, errConflict) || try == 4 {
			return err
		}
		if err := r.reread(ctx, name); err != nil {
			return err
		}
	}
}

func (r *KubeRecords) newBucket(name string) kubeConfigMap {
	labels := r.k.names.labels(roleRecord)
	labels[labelPlacement] = short(r.placement)
	return kubeConfigMap{APIVersion: "v1", Kind: "ConfigMap",
		Metadata: objectMeta{Name: name, Labels: labels, Annotations: map[string]string{annotationID: r.placement}}}
}

func (r *KubeRecords) send(ctx context.Context, cm kubeConfigMap, update bool) error {
	var out kubeConfigMap
	var err error
	r.requests.Add(1)
	for _, v := range cm.BinaryData {
		r.bytes.Add(int64(len(v)))
	}
	if update {
		err = r.k.api.do(ctx, http.MethodPut, r.k.api.configMaps()+"/"+cm.Metadata.Name, cm, &out)
	} else {
		err = r.k.api.do(ctx, http.MethodPost, r.k.api.configMaps(), cm, &out)
	}
	if err != nil {
		return fmt.Errorf("kubernetes: write the record: %w", err)
	}
	r.mu.Lock()
	r.cache[out.Metadata.Name] = out
	r.mu.Unlock()
	return nil
}

// reread fetches one bucket after a conflict (or learns it is gone).
func (r *KubeRecords) reread(ctx context.Context, name string) error {
	var cm kubeConfigMap
	r.requests.Add(1)
	err := r.k.api.do(ctx, http.MethodGet, r.k.api.configMaps()+"/"+name, nil, &cm)
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case errors.Is(err, errNotFound):
		delete(r.cache, name)
		return nil
	case err != nil:
		return fmt.Errorf("kubernetes: read the record: %w", err)
	}
	r.cache[name] = cm
	return nil
}
