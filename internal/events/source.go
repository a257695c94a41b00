package events

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Options configure a Source; zero values take the defaults below.
type Options struct {
	// URL is the AMQP URL with its password (amqp://user:pass@host:port/vhost).
	URL string
	// Exchange is the topic exchange the notifier publishes to (oslo's
	// control_exchange: "ironic" for Ironic).
	Exchange string
	// Topic is the notification topic; the queue is bound to Topic.* so
	// that every priority (info, error, ...) arrives.
	Topic string
	// Queue is this engine's own queue: exclusive, deleted when the
	// engine disconnects, so one engine's backlog never grows unseen.
	Queue string
	// Window is how long the first message of a batch waits for others.
	Window time.Duration
	// MaxQueue bounds the messages held; past it the batch is marked Lost.
	MaxQueue int
	// Backoff bounds the wait between reconnects.
	MinBackoff, MaxBackoff time.Duration
	Log                    *slog.Logger
	Metrics                *Metrics
}

// Defaults.
const (
	DefaultExchange   = "ironic"
	DefaultTopic      = "ironic_versioned_notifications"
	DefaultWindow     = 200 * time.Millisecond
	DefaultMaxQueue   = 10000
	DefaultMinBackoff = 500 * time.Millisecond
	DefaultMaxBackoff = 30 * time.Second
	maxMessageBytes   = 1 << 20 // a notification is a few KiB; more is not Ironic's
)

// Message is one delivery, as received.
type Message struct {
	Body       []byte
	RoutingKey string
	Received   time.Time
}

// Batch is what arrived within one window. Lost says messages may have
// been missed since the previous batch (overflow, a reconnect, an
// oversized message): the receiver must run a full cycle.
type Batch struct {
	Messages []Message
	// Nodes are uuids known changed without a message: the probe's
	// (Watermark), synced without asking the plugin to map anything.
	Nodes []string
	Lost  bool
	Why   string // why Lost, for the log
	// Overflow says why Nodes may not be all that changed (the probe saw
	// only changed nodes): a full cycle must judge. "" if they are.
	Overflow string
}

// State is the source's condition, for the status page and readiness.
type State struct {
	Connected bool
	Since     time.Time // of the last change of Connected
	LastError string
	Connects  int // connections made, the first included
}

// Source consumes one queue. Run it with Run; read batches from Batches.
type Source struct {
	opts     Options
	password string // to redact
	batches  chan Batch
	q        queue

	mu    sync.Mutex
	state State
}

// New checks opts and returns a Source that is not yet running.
func New(opts Options) (*Source, error) {
	if opts.URL == "" {
		return nil, errors.New("events: no transport URL")
	}
	uri, err := amqp.ParseURI(opts.URL)
	if err != nil {
		return nil, fmt.Errorf("events: transport URL: %v", err)
	}
	if opts.Queue == "" {
		return nil, errors.New("events: no queue name")
	}
	opts.Exchange = cmpOr(opts.Exchange, DefaultExchange)
	opts.Topic = cmpOr(opts.Topic, DefaultTopic)
	opts.Window = cmpOr(opts.Window, DefaultWindow)
	opts.MaxQueue = cmpOr(opts.MaxQueue, DefaultMaxQueue)
	opts.MinBackoff = cmpOr(opts.MinBackoff, DefaultMinBackoff)
	opts.MaxBackoff = cmpOr(opts.MaxBackoff, DefaultMaxBackoff)
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	s := &Source{opts: opts, batches: make(chan Batch), password: uri.Password}
	s.q.init(opts.MaxQueue)
	s.state.Since = time.Now()
	return s, nil
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Batches delivers coalesced batches; it is never closed.
func (s *Source) Batches() <-chan Batch { return s.batches }

// State is a copy of the source's condition.
func (s *Source) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// Run consumes until ctx ends, reconnecting with jittered exponential
// backoff. Each (re)connection marks the next batch Lost: what was
// published while disconnected is gone.
func (s *Source) Run(ctx context.Context) {
	go s.coalesce(ctx)
	wait := s.opts.MinBackoff
	for ctx.Err() == nil {
		start := time.Now()
		err := s.session(ctx)
		if ctx.Err() != nil {
			return
		}
		s.setState(false, err)
		if time.Since(start) > s.opts.MaxBackoff {
			wait = s.opts.MinBackoff // it was up a good while: start over
		}
		d := wait/2 + rand.N(wait/2+1)
		s.opts.Log.Warn("events: bus connection lost; full cycles cover the gap", "err", s.redact(err), "retry_in", d.Round(time.Millisecond))
		select {
		case <-ctx.Done():
			return
		case <-time.After(d):
		}
		wait = min(wait*2, s.opts.MaxBackoff)
	}
}

func (s *Source) setState(up bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state.Connected != up {
		s.state.Since = time.Now()
	}
	s.state.Connected = up
	if err != nil {
		s.state.LastError = s.redact(err).Error()
	}
	if up {
		s.state.Connects++
	}
	if s.opts.Metrics != nil {
		s.opts.Metrics.connected(up)
	}
}

// session is one connection: declare, bind, consume until it breaks.
func (s *Source) session(ctx context.Context) error {
	conn, capped, err := dial(s.opts.URL, amqp.Config{ // dial.go: bodies over the limit are not read
		Heartbeat:  10 * time.Second,
		Locale:     "en_US",
		Properties: amqp.Table{"connection_name": "rpengine " + s.opts.Queue},
	})
	if err != nil {
		return err
	}
	cut := capped.cut.Load()
	defer conn.Close()
	deliveries, err := s.subscribe(conn)
	if err != nil {
		return err
	}
	s.setState(true, nil)
	s.q.lose("connected: messages published before are not seen")
	s.opts.Log.Info("events: consuming", "exchange", s.opts.Exchange, "topic", s.opts.Topic, "queue", s.opts.Queue)
	closed := conn.NotifyClose(make(chan *amqp.Error, 1))
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e := <-closed:
			if e == nil {
				return errors.New("connection closed")
			}
			return e
		case d, ok := <-deliveries:
			if !ok {
				return errors.New("the broker ended the subscription")
			}
			s.received(d, capped, &cut)
		}
	}
}

// subscribe declares the exchange as oslo.messaging does (topic, not
// durable, not auto-deleted) or, if the operator made it differ, uses it
// as it is; then this engine's queue, bound to Topic.*.
func (s *Source) subscribe(conn *amqp.Connection) (<-chan amqp.Delivery, error) {
	ch, err := conn.Channel()
	if err != nil {
		return nil, err
	}
	if err := ch.ExchangeDeclare(s.opts.Exchange, "topic", false, false, false, false, nil); err != nil {
		var ae *amqp.Error
		if !errors.As(err, &ae) || ae.Code != amqp.PreconditionFailed {
			return nil, fmt.Errorf("declare exchange %q: %w", s.opts.Exchange, err)
		}
		if ch, err = conn.Channel(); err != nil { // the failed declare closed the channel
			return nil, err
		}
		if err := ch.ExchangeDeclarePassive(s.opts.Exchange, "topic", false, false, false, false, nil); err != nil {
			return nil, fmt.Errorf("exchange %q: %w", s.opts.Exchange, err)
		}
	}
	args := amqp.Table{"x-max-length": int32(s.opts.MaxQueue), "x-overflow": "drop-head"}
	if _, err := ch.QueueDeclare(s.opts.Queue, false, true, true, false, args); err != nil {
		return nil, fmt.Errorf("declare queue %q: %w", s.opts.Queue, err)
	}
	if err := ch.QueueBind(s.opts.Queue, s.opts.Topic+".*", s.opts.Exchange, false, nil); err != nil {
		return nil, fmt.Errorf("bind queue %q to %s.*: %w", s.opts.Queue, s.opts.Topic, err)
	}
	if err := ch.Qos(1000, 0, false); err != nil {
		return nil, err
	}
	// Auto-ack: a message is a hint; one lost in a crash costs latency only.
	return ch.Consume(s.opts.Queue, "", true, true, false, false, nil)
}

// received takes one delivery; an empty one is a body capped cut
// (framecap.go) when its count of cuts moved past *cut.
func (s *Source) received(d amqp.Delivery, capped *capConn, cut *int64) {
	if s.opts.Metrics != nil {
		s.opts.Metrics.Received.Inc()
	}
	if n := capped.cut.Load(); len(d.Body) == 0 && n > *cut {
		*cut = n
		s.q.lose(fmt.Sprintf("a message of %d bytes (over %d) was dropped unread", capped.cutSize.Load(), maxMessageBytes))
		return
	}
	if len(d.Body) > maxMessageBytes {
		s.q.lose(fmt.Sprintf("a message of %d bytes (over %d) was dropped", len(d.Body), maxMessageBytes))
		return
	}
	s.q.push(Message{Body: d.Body, RoutingKey: d.RoutingKey, Received: time.Now()})
}

// redact keeps the password out of an error that may quote the URL.
func (s *Source) redact(err error) error {
	if err == nil || s.password == "" || !strings.Contains(err.Error(), s.password) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), s.password, "***"))
}
