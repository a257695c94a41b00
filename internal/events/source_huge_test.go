package events_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/events"
	"github.com/rpengine/rpengine/internal/testing/rabbittest"
)

// TestHugeMessagePublisher is not a test: TestHugeMessageNotRead runs it
// in a process of its own, so that the 100 MiB it publishes does not
// count in the consumer's memory.
func TestHugeMessagePublisher(t *testing.T) {
	url := os.Getenv("RPENGINE_HUGE_PUBLISH")
	if url == "" {
		t.Skip("a helper of TestHugeMessageNotRead")
	}
	b := &rabbittest.Broker{URL: url}
	if err := b.Publish(context.Background(), events.DefaultExchange, events.DefaultTopic+".info", bytes.Repeat([]byte("x"), 100<<20)); err != nil {
		t.Fatal(err)
	}
}

// A 100 MiB message costs the consumer about one frame, not its size: it
// is cut before it is read (framecap.go), reported as a lost message,
// and the next message arrives as usual.
func TestHugeMessageNotRead(t *testing.T) {
	b := rabbittest.Start(t)
	s, err := events.New(events.Options{URL: b.URL, Queue: "rpengine-huge", MinBackoff: 100 * time.Millisecond, MaxBackoff: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx)
	waitState(t, s, true)
	next(t, s) // the first batch: lost, as connected
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	pub := exec.Command(os.Args[0], "-test.run=^TestHugeMessagePublisher$", "-test.count=1")
	pub.Env = append(os.Environ(), "RPENGINE_HUGE_PUBLISH="+b.URL)
	if out, err := pub.CombinedOutput(); err != nil {
		t.Fatalf("publisher: %v\n%s", err, out)
	}
	bt := next(t, s)
	runtime.ReadMemStats(&after)
	if !bt.Lost || !strings.Contains(bt.Why, "104857600 bytes") || !strings.Contains(bt.Why, "unread") {
		t.Fatalf("batch after the huge message: %+v", bt)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("consuming a 100 MiB message allocated %d MiB", alloc>>20)
	}
	if err := b.Publish(ctx, events.DefaultExchange, events.DefaultTopic+".info", []byte(`{"n":1}`)); err != nil {
		t.Fatal(err)
	}
	if bt := next(t, s); bt.Lost || len(bt.Messages) != 1 || !s.State().Connected {
		t.Fatalf("after the huge message: %+v, state %+v", bt, s.State())
	}
	t.Logf("FIGURE a 100 MiB message: %d KiB allocated by the consumer while it passed", (after.TotalAlloc-before.TotalAlloc)>>10)
}
