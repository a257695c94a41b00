package ops

import (
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/redact"
)

// Info describes the loaded configuration, for the status page. It holds
// no secret: Auth is a description such as "password as user rpengine".
type Info struct {
	EngineID       string
	Plugin         string
	PluginVersion  string
	Placement      string
	Auth           string
	Interval       time.Duration
	UnhealthyAfter int
	History        int
	LoadedAt       time.Time
	// ConfigPath and ConfigSHA256 name the config file the running setup
	// was loaded from and its content's hash then: the API sends them, so
	// a verb answered by the daemon can say which config it used and
	// whether the file changed since.
	ConfigPath, ConfigSHA256 string
	// Zones are provider.aggregate_rules, for the capacity table.
	Zones engine.AggregateRules
}

// Ops gathers what the daemon shows: metrics, health, the recent cycles
// and the providers written in the last one. It is safe for concurrent use.
type Ops struct {
	Metrics *Metrics
	now     func() time.Time
	health  health
	drift   drift
	nodes   nodeTable
	// planning is set while the engine runs a plan (a dry cycle), whose
	// events the page ignores.
	planning atomic.Bool

	mu        sync.Mutex
	info      Info
	cycles    []Cycle // oldest first, at most info.History
	running   bool
	done      int
	total     int
	lastLog   time.Time // of progress, or the cycle's start
	logged    bool      // a progress line was logged this cycle
	reloadOK  bool
	reload    string    // the last reload's result
	bus       bus       // the event source, if any (bus.go)
	observing observing // observe mode's drift, if observing (observe.go)
	finished  int       // cycles recorded since start
	api       apiState
	// capacityRows: the last cycle's capacity table (capacity.go).
	capacityRows []CapacityRow
	// allocBusy: one node page at a time reads Placement (allocations.go).
	allocBusy sync.Mutex
}

// New starts recording. now is the clock (time.Now in production).
func New(now func() time.Time) *Ops {
	if now == nil {
		now = time.Now
	}
	o := &Ops{Metrics: NewMetrics(), now: now}
	o.health.started = now()
	o.Configure(Info{Interval: time.Minute, UnhealthyAfter: 3, History: 50})
	return o
}

// Configure records a loaded (or reloaded) configuration.
func (o *Ops) Configure(info Info) {
	if info.History <= 0 {
		info.History = 50
	}
	info.Placement = redact.URL(info.Placement) // the page has no authentication of its own
	o.health.configure(info.Interval, info.UnhealthyAfter)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.info = info
	if extra := len(o.cycles) - info.History; extra > 0 {
		o.cycles = slices.Clone(o.cycles[extra:])
	}
}

// Reloaded records a SIGHUP reload's result.
func (o *Ops) Reloaded(err error) {
	o.Metrics.Reloaded(err == nil)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.reloadOK, o.reload = err == nil, "ok"
	if err != nil {
		o.reload = err.Error()
	}
}

// CycleStarted marks a cycle under way.
func (o *Ops) CycleStarted() {
	at := o.now()
	o.health.cycleStarted(at)
	o.drift.take() // rows seen between cycles (none expected) are not this cycle's
	o.mu.Lock()
	defer o.mu.Unlock()
	o.running, o.done, o.total = true, 0, 0
	o.lastLog, o.logged = at, false
}

// Progress is engine.Options.Progress: it feeds the page and health, and
// in a cycle longer than logEvery logs a line every logEvery (and one at
// the end), so a cold start of thousands of providers shows it is moving
// while a quick cycle says nothing.
func (o *Ops) Progress(log *slog.Logger, logEvery time.Duration) func(done, total int) {
	return func(done, total int) {
		now := o.now()
		o.health.progressed(now)
		o.mu.Lock()
		o.done, o.total = done, total
		due := now.Sub(o.lastLog) >= logEvery || done == total && o.logged
		if due {
			o.lastLog, o.logged = now, true
		}
		o.mu.Unlock()
		if due {
			log.Info("cycle progress", "done", done, "total", total)
		}
	}
}

// CycleDone records a finished cycle and returns its outcome.
func (o *Ops) CycleDone(r engine.Report, start time.Time) Outcome {
	end := o.now()
	out := Classify(r)
	o.Metrics.cycle(r, out, end)
	o.health.cycleDone(out, end)
	o.nodes.finished()
	o.countCapacity()
	rows, total := o.drift.take()
	rows = append(rows, errorRows(r.Errors)...)
	total += len(r.Errors)
	r.Writes, r.Outcomes = nil, nil // the page keeps its own node table
	c := Cycle{Start: start, End: end, Outcome: out, Report: r, Drift: rows, DriftTotal: total}

	o.mu.Lock()
	defer o.mu.Unlock()
	o.running = false
	o.finished++
	if n := len(o.cycles); n > 0 {
		o.cycles[n-1].Drift = nil // only the newest keeps its rows
	}
	o.cycles = append(o.cycles, c)
	if extra := len(o.cycles) - o.info.History; extra > 0 {
		o.cycles = slices.Delete(o.cycles, 0, extra)
	}
	return out
}

// Ready answers /readyz: not while a service the engine needs is failing.
// The event bus is not one of them (bus.go): its state is in the reason.
func (o *Ops) Ready() (bool, string) {
	if why := o.failing(); why != "" {
		return false, o.busReason(why)
	}
	ok, why := o.health.ready()
	return ok, o.busReason(why)
}

// Live answers /livez: the process and its loop, whatever the services
// it depends on do (a liveness probe must not restart it in their outage).
func (o *Ops) Live() (bool, string) { return o.health.live(o.now()) }

// Healthy answers /healthz: not while a service the engine needs is
// failing, even during a long first cycle (deps.go).
func (o *Ops) Healthy() (bool, string) {
	if why := o.failing(); why != "" {
		return false, why
	}
	return o.health.healthy(o.now())
}

// failing says which services are failing now, "" if none.
func (o *Ops) failing() string {
	down := o.down(o.now())
	if len(down) == 0 {
		return ""
	}
	msg := "unhealthy: " + down[0].String()
	if len(down) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(down)-1)
	}
	return msg
}

// Failing lists the services failing now, for the status page.
func (o *Ops) Failing() []Dependency { return o.down(o.now()) }

// Interval is the configured interval between cycles.
func (o *Ops) Interval() time.Duration { return o.health.every() }

// Status is a consistent copy of what the page shows.
type Status struct {
	Info          Info
	Now           time.Time
	Ready         bool
	ReadyReason   string
	Healthy       bool
	HealthyReason string
	Running       bool
	Done, Total   int
	Reload        string
	ReloadOK      bool
	Cycles        []Cycle       // newest first
	Failing       []Dependency  // the outside services failing now
	Bus           *BusState     // nil without [events]
	Observe       *ObserveState // nil but in observe mode
	Capacity      []CapacityRow
}

// Snapshot copies the current status.
func (o *Ops) Snapshot() Status {
	s := Status{Now: o.now()}
	s.Ready, s.ReadyReason = o.Ready()
	s.Healthy, s.HealthyReason = o.Healthy()
	s.Failing = o.Failing()
	s.Bus = o.busState()
	s.Observe = o.observeState()
	s.Capacity = o.Capacity()
	o.mu.Lock()
	defer o.mu.Unlock()
	s.Info, s.Running, s.Done, s.Total = o.info, o.running, o.done, o.total
	s.Reload, s.ReloadOK = o.reload, o.reloadOK
	s.Cycles = slices.Clone(o.cycles)
	slices.Reverse(s.Cycles)
	return s
}
