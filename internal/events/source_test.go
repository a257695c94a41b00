package events_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/rpengine/rpengine/internal/events"
	"github.com/rpengine/rpengine/internal/testing/rabbittest"
)

// next waits for a batch, failing after a generous bound.
func next(t *testing.T, s *events.Source) events.Batch {
	t.Helper()
	select {
	case b := <-s.Batches():
		return b
	case <-time.After(30 * time.Second):
		t.Fatalf("no batch within 30 s; state %+v", s.State())
		return events.Batch{}
	}
}

func waitState(t *testing.T, s *events.Source, up bool) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if s.State().Connected == up {
			return
		}
	}
	t.Fatalf("state never became connected=%v: %+v", up, s.State())
}

// TestSourceAgainstRealRabbitMQ: messages published on the topic arrive
// coalesced; a broker outage shows in the state and the metrics, and the
// first batch after the reconnect is marked Lost (a full cycle follows).
func TestSourceAgainstRealRabbitMQ(t *testing.T) {
	b := rabbittest.Start(t)
	reg := prometheus.NewRegistry()
	m := events.NewMetrics(reg)
	s, err := events.New(events.Options{URL: b.URL, Queue: "rpengine-test", Metrics: m,
		MinBackoff: 100 * time.Millisecond, MaxBackoff: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx)
	waitState(t, s, true)
	if first := next(t, s); !first.Lost || len(first.Messages) != 0 {
		t.Fatalf("first batch after connecting: %+v, want Lost and empty", first)
	}
	for i := range 5 {
		key := events.DefaultTopic + ".info"
		if i == 4 {
			key = events.DefaultTopic + ".error"
		}
		if err := b.Publish(ctx, events.DefaultExchange, key, []byte(`{"n":1}`)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Publish(ctx, events.DefaultExchange, "notifications.info", []byte(`{}`)); err != nil {
		t.Fatal(err) // another topic: not bound, never delivered
	}
	got := 0
	for got < 5 {
		bt := next(t, s)
		if bt.Lost {
			t.Fatalf("batch marked lost with the broker up: %s", bt.Why)
		}
		got += len(bt.Messages)
	}
	if got != 5 || testutil.ToFloat64(m.Received) != 5 {
		t.Fatalf("got %d messages, received metric %v; want 5", got, testutil.ToFloat64(m.Received))
	}

	b.Stop()
	waitState(t, s, false)
	if testutil.ToFloat64(m.Connected) != 0 || s.State().LastError == "" {
		t.Fatalf("after the outage: connected gauge %v, state %+v", testutil.ToFloat64(m.Connected), s.State())
	}
	if err := b.Restart(); err != nil {
		t.Fatal(err)
	}
	waitState(t, s, true)
	if bt := next(t, s); !bt.Lost {
		t.Fatalf("first batch after the reconnect not marked lost: %+v", bt)
	}
	if st := s.State(); st.Connects != 2 || testutil.ToFloat64(m.Connects) != 2 {
		t.Fatalf("connects: state %d, metric %v; want 2", st.Connects, testutil.ToFloat64(m.Connects))
	}
}
