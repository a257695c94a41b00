package events

import (
	"strings"
	"testing"
	"time"
)

// The queue is bounded by count and by bytes; past either bound the
// batch is marked lost (a full cycle follows), never grown.
func TestQueueBounds(t *testing.T) {
	var q queue
	q.init(3)
	for range 5 {
		q.push(Message{Body: []byte("{}"), Received: time.Now()})
	}
	b, ok := q.take()
	if !ok || len(b.Messages) != 3 || !b.Lost || !strings.Contains(b.Why, "max_queue") {
		t.Fatalf("count bound: %d messages, lost %v (%s)", len(b.Messages), b.Lost, b.Why)
	}
	q.init(1000)
	big := make([]byte, 1<<20)
	for range 70 {
		q.push(Message{Body: big, Received: time.Now()})
	}
	b, _ = q.take()
	if len(b.Messages) != 64 || !b.Lost || !strings.Contains(b.Why, "MiB") {
		t.Fatalf("byte bound: %d messages, lost %v (%s)", len(b.Messages), b.Lost, b.Why)
	}
	if _, ok := q.take(); ok {
		t.Fatal("an empty queue gave a batch")
	}
}
