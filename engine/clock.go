package engine

import "time"

// Clock tells the engine the time of the rules that depend on it (the
// delete_grace between two proofs of deletion). Tests set a fake one to
// step through the grace without waiting.
type Clock interface {
	Now() time.Time
}

// now reads the configured clock.
func (e *Engine) now() time.Time {
	if e.opts.Clock == nil {
		return time.Now()
	}
	return e.opts.Clock.Now()
}
