package conformance

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// Status is the outcome of one check.
type Status string

const (
	Pass Status = "PASS" // the plugin meets the check
	Fail Status = "FAIL" // it does not: the suite exits 1
	Skip Status = "SKIP" // the check does not apply (e.g. an optional export is absent)
)

// Result is one check's outcome.
type Result struct {
	Check  string        `json:"check"`
	Status Status        `json:"status"`
	Detail string        `json:"detail,omitempty"`
	Took   time.Duration `json:"took_ns"`
}

// Options say which plugin to test and how: Config is the [plugin.config]
// table as JSON (nil means {}), Host the engine's limits and grants.
type Options struct {
	Path   string
	Config []byte
	Host   wasmhost.Options
}

// Headroom is the share of plugin.timeout and plugin.memory_limit one
// answer may use: a plugin that needs more fails as its fleet grows.
const Headroom = 0.5

// Run runs every check in order, calling report after each, and reports
// whether all passed (SKIPs count as passed). A failed load or configure
// stops the suite: the rest is skipped.
func Run(ctx context.Context, o Options, report func(Result)) bool {
	o.Host = withDefaults(o.Host)
	s := &suite{o: o, used: map[string]int{}}
	// Requests are counted where they leave, whatever authenticates them
	// (a Keystone token, a vCenter session or nothing).
	s.o.Host.HTTPClient = counted(o.Host, s.count)
	ok := true
	stopped := ""
	for _, c := range checks {
		r := Result{Check: c.name}
		start := time.Now()
		if stopped != "" {
			r.Status, r.Detail = Skip, stopped
		} else {
			err := c.run(ctx, s)
			r.Took = time.Since(start)
			switch {
			case err == nil:
				r.Status = Pass
			case isSkip(err):
				r.Status = Skip
			default:
				r.Status, ok = Fail, false
				if c.fatal {
					stopped = c.name + " failed"
				}
			}
			if err != nil {
				r.Detail = err.Error()
			} else {
				r.Detail = s.note
			}
		}
		s.note = ""
		report(r)
	}
	if s.plugin != nil {
		s.plugin.Close(ctx)
	}
	return ok
}

// suite is what the checks share.
type suite struct {
	o      Options
	info   wasmhost.Info
	plugin *wasmhost.Plugin
	nodes  []hostabi.Node
	insts  []hostabi.Instance
	// slowest is the longest call seen, for the time check.
	slowest     time.Duration
	slowestCall string
	note        string // a passing check's detail

	mu   sync.Mutex
	used map[string]int // requests per service, seen by the gate

	quiet atomic.Int64 // log records dropped by the memory check
}

type check struct {
	name  string
	fatal bool
	run   func(context.Context, *suite) error
}

var checks = []check{
	{"abi", true, checkABI},
	{"describe", false, checkDescribe},
	{"configure", true, checkConfigure},
	{"config_errors", false, checkConfigErrors},
	{"list_nodes", false, checkListNodes},
	{"list_instances", false, checkListInstances},
	{"listings_agree", false, checkAgree},
	{"encodings_agree", false, checkEncodings},
	{"confirm_deleted", false, checkConfirmDeleted},
	{"answer_time", false, checkTime},
	{"memory", false, checkMemory},
	{"services", false, checkServices},
}

type skipError struct{ msg string }

func (e skipError) Error() string { return e.msg }

func skip(format string, args ...any) error { return skipError{fmt.Sprintf(format, args...)} }

func isSkip(err error) bool { _, ok := err.(skipError); return ok }

func (s *suite) count(service string) {
	s.mu.Lock()
	s.used[service]++
	s.mu.Unlock()
}

// timed runs one plugin call and keeps the slowest.
func (s *suite) timed(name string, f func() error) error {
	start := time.Now()
	err := f()
	if d := time.Since(start); d > s.slowest {
		s.slowest, s.slowestCall = d, name
	}
	return err
}

func withDefaults(o wasmhost.Options) wasmhost.Options {
	if o.CallTimeout == 0 {
		o.CallTimeout = 60 * time.Second
	}
	if o.MemoryLimit == 0 {
		o.MemoryLimit = 256 << 20
	}
	return o
}
