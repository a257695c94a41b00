package coord_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/coord"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// A holder whose lease expired (here: revoked behind its back, as etcd
// would expire it while the engine was paused) has its late record write
// refused; the next holder reads its last accepted write and writes.
func TestStaleHolderRecordWriteIsRefused(t *testing.T) {
	r := newRig(t)
	a := r.member("a", coord.Division{Partitions: 1})
	held := sync(t, a)
	rec := a.Records(held, "placement-1")
	ctx := context.Background()
	if err := rec.Store(ctx, map[string][]byte{"u1": []byte(`{"by":"a"}`)}, nil); err != nil {
		t.Fatalf("holder's write: %v", err)
	}

	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{r.url}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	m, err := cli.Get(ctx, r.prefix+"members/a")
	if err != nil || len(m.Kvs) != 1 {
		t.Fatalf("member key: %v %v", m, err)
	}
	if _, err := cli.Revoke(ctx, clientv3.LeaseID(m.Kvs[0].Lease)); err != nil {
		t.Fatal(err)
	}
	err = rec.Store(ctx, map[string][]byte{"u1": []byte(`{"by":"a","late":true}`)}, nil)
	if !errors.Is(err, coord.ErrRecordFenced) {
		t.Fatalf("late write after the lease ended: %v, want ErrRecordFenced", err)
	}

	b := r.member("b", coord.Division{Partitions: 1})
	var bh coord.Assignment
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if bh = sync(t, b); len(bh.Held) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("b never held the fleet: %+v", bh)
		}
	}
	got, err := b.Records(bh, "placement-1").Load(ctx)
	if err != nil || string(got["u1"]) != `{"by":"a"}` {
		t.Fatalf("next holder read %q (%v), want a's last accepted write", got, err)
	}
	if err := b.Records(bh, "placement-1").Store(ctx, nil, []string{"u1"}); err != nil {
		t.Fatalf("next holder's write: %v", err)
	}
	if other, _ := b.Records(bh, "placement-2").Load(ctx); len(other) != 0 {
		t.Fatalf("another Placement's record is not empty: %q", other)
	}
}

// Many entries go in few transactions, each within etcd's limits, and
// read back in pages.
func TestRecordsBatchAndPage(t *testing.T) {
	r := newRig(t)
	a := r.member("a", coord.Division{Partitions: 1})
	rec := a.Records(sync(t, a), "p")
	put := map[string][]byte{}
	for i := range 5000 {
		put[fmt.Sprintf("%08d", i)] = []byte(`{"by":"a","Managed":{"Traits":["CUSTOM_GPU"]}}`)
	}
	if err := rec.Store(context.Background(), put, nil); err != nil {
		t.Fatal(err)
	}
	if req, _ := rec.Stats(); req != 42 { // ceil(5000/120)
		t.Fatalf("%d transactions for 5000 entries, want 42", req)
	}
	got, err := rec.Load(context.Background())
	if err != nil || len(got) != 5000 {
		t.Fatalf("read back %d entries: %v", len(got), err)
	}
}

// A Reader sees what a holder claims and stored, and can write nothing:
// a plan beside the fleet holds no lease.
func TestReaderReadsAndNeverWrites(t *testing.T) {
	r := newRig(t)
	a := r.member("a", coord.Division{Partitions: 4})
	held := sync(t, a)
	ctx := context.Background()
	if err := a.Records(held, "placement-1").Store(ctx, map[string][]byte{"u1": []byte(`{"by":"a"}`)}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := a.RecordPlacement(ctx, "placement-1", 0); err != nil {
		t.Fatal(err)
	}
	rd, err := coord.OpenReader([]string{r.url}, coord.Access{}, r.prefix)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	units, err := rd.Held(ctx, "a")
	if err != nil || len(units) != 4 || len(coord.Partitions(units)) != 4 {
		t.Fatalf("held by a: %v %v", units, err)
	}
	if none, _ := rd.Held(ctx, "b"); len(none) != 0 {
		t.Fatalf("held by b: %v", none)
	}
	if id, err := rd.RecordedPlacement(ctx); id != "placement-1" || err != nil {
		t.Fatalf("recorded placement: %q %v", id, err)
	}
	rec := rd.Records("placement-1")
	got, err := rec.Load(ctx)
	if err != nil || string(got["u1"]) != `{"by":"a"}` {
		t.Fatalf("load: %q %v", got, err)
	}
	if err := rec.Store(ctx, map[string][]byte{"u2": []byte(`{}`)}, []string{"u1"}); !errors.Is(err, coord.ErrRecordFenced) {
		t.Fatalf("a reader's store: %v, want ErrRecordFenced", err)
	}
	if requests, bytes := rec.Stats(); requests != 1 || bytes != 0 {
		t.Fatalf("reader sent %d requests, wrote %d bytes", requests, bytes)
	}
}
