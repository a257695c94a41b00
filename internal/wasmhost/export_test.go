package wasmhost

// Test-only doors into the package, for its external tests.

// InProcessUnlimited runs a plugin in process with no time limit at all:
// the baseline the benchmarks compare the limits against.
const InProcessUnlimited = inProcessUnlimited

// WithoutGOMEMLIMIT withholds GOMEMLIMIT from the guest.
func WithoutGOMEMLIMIT(o Options) Options {
	o.noMemLimit = true
	return o
}

// KillHostForTest kills the plugin's host process, as the kernel's OOM
// killer would, and reports whether there was one.
func KillHostForTest(p *Plugin) bool {
	c, ok := p.run.(*childHost)
	if !ok || c.proc == nil {
		return false
	}
	c.proc.kill()
	<-c.proc.exited
	return true
}
