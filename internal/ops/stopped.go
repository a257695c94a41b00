package ops

// CycleStopped ends a cycle that the daemon's stop cut before it wrote
// anything: it is neither a success nor a failure, so nothing is counted
// and health keeps its last verdict.
func (o *Ops) CycleStopped() {
	o.health.mu.Lock()
	o.health.running = false
	o.health.mu.Unlock()
	o.mu.Lock()
	o.running = false
	o.mu.Unlock()
}
