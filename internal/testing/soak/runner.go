package soak

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/testing/placementfake"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// Modes: how the world reaches the engine.
const (
	ModeMemory = "memory" // an in-memory engine.Source
	ModeWasm   = "wasm"   // the real fake plugin in Wasm, reading the world over HTTP
)

// Config says how long and how hard to soak.
type Config struct {
	Seed   uint64
	Cycles int
	Nodes  int
	// MaxDuration ends the run early (the report says so); 0: no bound.
	MaxDuration time.Duration
	Mode        string // ModeMemory (default) or ModeWasm
	// Plugin is the fake plugin's .wasm file, for ModeWasm; CacheDir its
	// compilation cache ("" = the user's cache directory).
	Plugin, CacheDir string
	// ClientTimeout is the Placement client's per-request limit; the
	// injected timeouts just exceed it, so keep it small.
	ClientTimeout time.Duration
	// SourceTimeout is the plugin call limit an overrunning source hits.
	SourceTimeout time.Duration
	// QuietLen is the length of the fault-free phases (at least 2).
	QuietLen int
	// Dir holds the state file; "" makes a temporary one.
	Dir string
	// Progress, if set, gets a line every ProgressEvery cycles, and each
	// violation as it happens.
	Progress      io.Writer
	ProgressEvery int
	// Trace, a node uuid, writes that node's history to Progress: world
	// events, what the source said about it, the engine's requests.
	Trace string
}

func (c *Config) defaults() {
	if c.Mode == "" {
		c.Mode = ModeMemory
	}
	if c.CacheDir == "" {
		c.CacheDir = DefaultCacheDir()
	}
	if c.ClientTimeout == 0 {
		c.ClientTimeout = 250 * time.Millisecond
	}
	if c.SourceTimeout == 0 {
		// An overrun waits this out: short in memory; in Wasm a call
		// must also fit a healthy listing of the whole world.
		c.SourceTimeout = 20 * time.Millisecond
		if c.Mode == ModeWasm {
			c.SourceTimeout = time.Second
		}
	}
	if c.QuietLen < 2 {
		c.QuietLen = 3
	}
	if c.ProgressEvery == 0 {
		c.ProgressEvery = 500
	}
}

// policy is the engine's policy plus what the oracle needs of it.
type policy struct {
	engine.Policy
	shards     []string
	baseTraits []string
	// maxField, when set, is the host's per-node string limit: a node with
	// a longer string is quarantined (through the plugin host only).
	maxField int
}

func newPolicy() policy {
	owner := engine.OwnerTrait("soak")
	p := policy{
		Policy: engine.Policy{OwnerTrait: owner, MarkerTraits: []string{"COMPUTE_NODE"},
			Aggregates: []string{"e0000000-0000-4000-8000-000000000001"},
			Scope:      engine.Scope{Shards: shardsIn}},
		shards: shardsIn,
	}
	p.baseTraits = []string{owner, "COMPUTE_NODE"}
	slices.Sort(p.baseTraits)
	return p
}

// Runner is one soak: the world, the fake Placement, the engine under
// test, and what the checks must remember between cycles.
type Runner struct {
	cfg  Config
	pol  policy
	fake *placementfake.Server
	gate *gate
	nova *nova
	src  engine.Source
	// closeSrc releases the source (the Wasm plugin and world service).
	closeSrc func()

	eng       *engine.Engine
	state     *engine.State
	statePath string
	stop      chan struct{}
	cancel    context.CancelFunc

	// mu guards everything below that the source, the gate's hooks and
	// the loop share while a cycle runs.
	mu    sync.Mutex
	w     *Cloud
	cycle int
	plan  *cyclePlan
	rep   *Report

	snapNodes                   []hostabi.Node
	snapInstances               []hostabi.Instance
	listedNodes, listedInstance bool
	confirmAsked                []string
	// calls is the order the engine called the source in; the instances
	// that existed when the node listing returned must all be in the
	// instance listing (nodes first, then instances).
	calls                     []string
	landedBeforeNodesReturned []hostabi.Instance
	restarted                 string // the restart that struck this cycle

	foreignTraits, foreignAggs map[string]map[string]bool
	// tolerated: former node traits the engine may have added before its
	// state file was deleted (crash_lose_state); README: "without a record
	// the engine only adds", so they may stay. Counted, never hidden.
	tolerated map[string]map[string]bool
	// recordLost: nodes that existed when the state file was deleted.
	recordLost       map[string]bool
	leaks            map[string]winstance
	foreignProviders map[string]bool
	quietRun         int // index of this cycle in its quiet phase; 0 in chaos
	quietStart       int
	phaseLeft        int
	stale            map[string]bool
	recent           []string // nodes changed lately: where other writers strike
	phases           *rand.Rand
	pending          []scheduled // world changes due in later cycles
	// For the proof check: the cycles the source proved a node deleted
	// in, the last cycle a listing that reached the engine held it, and
	// the cycle the running engine process started at.
	proofs       map[string][]int
	lastListed   map[string]int
	processStart int
}

// New prepares a soak; Close releases it.
func New(cfg Config) (*Runner, error) {
	cfg.defaults()
	pol := newPolicy()
	if cfg.Mode == ModeWasm {
		pol.maxField = wasmhost.DefaultMaxField
	}
	r := &Runner{
		cfg: cfg, pol: pol,
		fake:          placementfake.New(placementfake.WithSeed(int64(cfg.Seed))),
		w:             newCloud(cfg.Seed, cfg.Nodes),
		rep:           newReport(cfg),
		foreignTraits: map[string]map[string]bool{}, foreignAggs: map[string]map[string]bool{},
		tolerated: map[string]map[string]bool{}, leaks: map[string]winstance{}, recordLost: map[string]bool{},
		foreignProviders: map[string]bool{}, stale: map[string]bool{},
		phases: rand.New(rand.NewPCG(cfg.Seed^phaseSalt, 0)),
		proofs: map[string][]int{}, lastListed: map[string]int{},
	}
	r.gate = newGate(r.fake)
	r.nova = newNova(r.fake.URL())
	dir := cfg.Dir
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "soak-"); err != nil {
			return nil, err
		}
	}
	r.statePath = filepath.Join(dir, "state.json")
	_ = os.Remove(r.statePath)
	// Providers of another manager: the engine must never send them a request.
	for i := range 3 {
		u := fmt.Sprintf("d0000000-0000-4000-8000-%012d", i)
		_ = r.fake.CreateProvider(u, "nova-"+u)
		_ = r.fake.AddTrait(u, "OWNER_NOVA")
		r.foreignProviders[u] = true
	}
	var err error
	switch cfg.Mode {
	case ModeMemory:
		r.src, r.closeSrc = &memSource{r: r, timeout: cfg.SourceTimeout}, func() {}
	case ModeWasm:
		r.src, r.closeSrc, err = r.wasmSource()
	default:
		err = fmt.Errorf("soak: unknown mode %q", cfg.Mode)
	}
	if err != nil {
		r.Close()
		return nil, err
	}
	return r, r.startEngine()
}

// Close stops the servers and the source.
func (r *Runner) Close() {
	if r.closeSrc != nil {
		r.closeSrc()
	}
	r.gate.Close()
	r.fake.Close()
}

// startEngine builds a new engine as a new process would: a new client
// (it negotiates again) and the state file as the last process left it.
func (r *Runner) startEngine() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pc, err := placement.New(ctx, placement.Config{Endpoint: r.gate.URL(), Token: "admin", Timeout: r.cfg.ClientTimeout})
	if err != nil {
		return fmt.Errorf("soak: engine start: %w", err)
	}
	r.state, _ = engine.LoadState(r.statePath, "soak") // a missing file is a cold start
	r.processStart = r.cycle + 1
	r.stop = make(chan struct{})
	r.eng = engine.New(r.src, pc, r.pol.Policy, engine.Options{
		Concurrency: 4, MaxAttempts: 6, DeleteGrace: 0, DeleteLimit: 0.1, Stop: r.stop,
	}, r.state, nil)
	return nil
}

// trace writes one line of the traced node's history.
func (r *Runner) trace(u, format string, args ...any) {
	if r.cfg.Trace != "" && r.cfg.Progress != nil && strings.EqualFold(u, r.cfg.Trace) {
		fmt.Fprintf(r.cfg.Progress, "trace cycle %d: %s\n", r.cycle, fmt.Sprintf(format, args...))
	}
}
