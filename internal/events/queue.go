package events

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// maxHeldBytes bounds the bodies held between batches, whatever their
// count: 10,000 messages of a few KiB fit many times over.
const maxHeldBytes = 64 << 20

// queue holds what arrived since the last batch, bounded: past max the
// newest are dropped and the batch is marked Lost (a full cycle covers
// them), so a burst costs a bounded amount of memory.
type queue struct {
	mu      sync.Mutex
	max     int
	bytes   int // of the held bodies, at most maxHeldBytes
	msgs    []Message
	lost    bool
	why     string
	first   time.Time     // arrival of the oldest held message
	arrived chan struct{} // signalled (non-blocking) on each push or loss
}

func (q *queue) init(max int) {
	q.max = max
	q.arrived = make(chan struct{}, 1)
}

func (q *queue) push(m Message) {
	q.mu.Lock()
	switch {
	case len(q.msgs) >= q.max:
		q.lose1("more than events.max_queue messages waited")
	case q.bytes+len(m.Body) > maxHeldBytes:
		q.lose1(fmt.Sprintf("more than %d MiB of messages waited", maxHeldBytes>>20))
	default:
		q.bytes += len(m.Body)
		if len(q.msgs) == 0 && !q.lost {
			q.first = m.Received
		}
		q.msgs = append(q.msgs, m)
	}
	q.mu.Unlock()
	q.signal()
}

func (q *queue) lose(why string) {
	q.mu.Lock()
	q.lose1(why)
	q.mu.Unlock()
	q.signal()
}

func (q *queue) lose1(why string) {
	if !q.lost {
		q.lost, q.why = true, why
		if len(q.msgs) == 0 {
			q.first = time.Now()
		}
	}
}

func (q *queue) signal() {
	select {
	case q.arrived <- struct{}{}:
	default:
	}
}

// take empties the queue into a batch; ok is false when it was empty.
func (q *queue) take() (b Batch, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.msgs) == 0 && !q.lost {
		return Batch{}, false
	}
	b = Batch{Messages: q.msgs, Lost: q.lost, Why: q.why}
	q.msgs, q.lost, q.why, q.bytes = nil, false, "", 0
	return b, true
}

// oldest is when the oldest held message arrived (zero if none).
func (q *queue) oldest() (time.Time, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.first, len(q.msgs) > 0 || q.lost
}

// coalesce hands the queue over one window after its oldest message
// arrived. While the receiver is busy (a cycle, a node sync) messages keep
// gathering in the queue, so a slow receiver gets fewer, larger batches.
func (s *Source) coalesce(ctx context.Context) {
	for {
		first, any := s.q.oldest()
		if !any {
			select {
			case <-ctx.Done():
				return
			case <-s.q.arrived:
				continue
			}
		}
		if d := time.Until(first.Add(s.opts.Window)); d > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(d):
			}
		}
		b, ok := s.q.take()
		if !ok {
			continue
		}
		if s.opts.Metrics != nil {
			s.opts.Metrics.Batches.Inc()
		}
		select {
		case <-ctx.Done():
			return
		case s.batches <- b:
		}
	}
}
