package bench

import (
	"context"
	"syscall"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
)

// CycleCost is one measured cycle.
type CycleCost struct {
	Requests int64
	CPU      time.Duration // user+system time of this process
	Wall     time.Duration
	Errors   []string
}

func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Measure runs one cycle and returns its cost. The Placement server must
// run in another process for CPU to be the engine's alone.
func Measure(ctx context.Context, e *engine.Engine) CycleCost {
	cpu, start := cpuNow(), time.Now()
	r := e.Cycle(ctx)
	return CycleCost{Requests: r.PlacementRequests, CPU: cpuNow() - cpu, Wall: time.Since(start), Errors: r.ErrorMessages()}
}

// NewEngine builds an engine over src writing to the Placement at url.
func NewEngine(ctx context.Context, url string, src engine.Source, concurrency int) (*engine.Engine, error) {
	pc, err := placement.New(ctx, placement.Config{Endpoint: url, Token: "admin", MaxConns: concurrency})
	if err != nil {
		return nil, err
	}
	pol := engine.Policy{OwnerTrait: engine.OwnerTrait("bench"), MarkerTraits: []string{"COMPUTE_NODE"}}
	return engine.New(src, pc, pol, engine.Options{Concurrency: concurrency}, nil, nil), nil
}
