package ops

import (
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/rpengine/rpengine/engine/placement"
)

// Dependencies: health must tell the truth during a long cycle. A first
// cycle of 100,000 providers runs for many intervals; if Placement, the
// plugin's service or Keystone goes down meanwhile, progress stops but
// the cycle goes on, and "a cycle is in progress" is no proof of health.
// So each outside service is followed request by request, and one that
// fails makes /healthz and /readyz say so at once (within the interval
// that saw it), names it, and the daemon logs it once per interval.

// Dependency is an outside service that is failing now.
type Dependency struct {
	Name     string    // placement, plugin, keystone, or a plugin service ("baremetal")
	Failures int       // failed requests (calls, logins) in a row
	Since    time.Time // the first of them
	Last     string    // the last failure
}

// String says which service fails, since when, and its last error.
func (d Dependency) String() string {
	return fmt.Sprintf("%s failing since %s (%d failed in a row): %s", d.Name, d.Since.UTC().Format(time.TimeOnly), d.Failures, d.Last)
}

// downAfter is how many failures in a row make a service down: one lost
// request is retried and says little; three say it is not answering.
// A failed plugin call is down at once: the client inside has retried.
const downAfter = 3

type deps struct {
	mu        sync.Mutex
	placement func() placement.Trouble // the client in use
	runs      map[string]*Dependency   // plugin calls and plugin services
	auth      struct {
		failures int64     // login failures when last seen
		at       time.Time // when they last rose
	}
	logged map[string]bool // down at the last log line
}

// WatchPlacement follows the client's failed requests (a reload passes
// its new client).
func (o *Ops) WatchPlacement(pc *placement.Client) {
	o.Metrics.deps.mu.Lock()
	defer o.Metrics.deps.mu.Unlock()
	o.Metrics.deps.placement = pc.Trouble
}

// observe records one request (call) to name: failed, or answered.
func (d *deps) observe(name string, err error, at time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.runs == nil {
		d.runs = map[string]*Dependency{}
	}
	if err == nil {
		delete(d.runs, name)
		return
	}
	r := d.runs[name]
	if r == nil {
		r = &Dependency{Name: name, Since: at}
		d.runs[name] = r
	}
	r.Failures++
	r.Last = cutMessage(err.Error())
}

// down lists the services failing now, sorted by name.
func (o *Ops) down(now time.Time) []Dependency {
	var out []Dependency
	o.Metrics.deps.mu.Lock()
	if f := o.Metrics.deps.placement; f != nil {
		if t := f(); t.Failures >= downAfter {
			out = append(out, Dependency{Name: "placement", Failures: t.Failures, Since: t.Since, Last: t.Last})
		}
	}
	for _, r := range o.Metrics.deps.runs {
		if r.Failures >= downAfter || r.Name == "plugin" {
			out = append(out, *r)
		}
	}
	if k, ok := o.keystone(now); ok {
		out = append(out, k)
	}
	o.Metrics.deps.mu.Unlock()
	slices.SortFunc(out, func(a, b Dependency) int { return cmpString(a.Name, b.Name) })
	return out
}

// keystone says whether the session's logins are failing: the token is
// past its expiry (a working session renews it before), or a login failed
// within the last interval. Called with deps.mu held.
func (o *Ops) keystone(now time.Time) (Dependency, bool) {
	a := o.Metrics.Auth()
	d := &o.Metrics.deps.auth
	if a.LoginFailures > d.failures {
		d.failures, d.at = a.LoginFailures, now
	}
	interval := o.health.every()
	recent := !d.at.IsZero() && now.Sub(d.at) <= interval
	if !a.Keystone || !recent && now.Before(a.Expires) {
		return Dependency{}, false
	}
	return Dependency{Name: "keystone", Failures: int(a.LoginFailures), Since: d.at,
		Last: fmt.Sprintf("token expires %s; %d failed logins", a.Expires.UTC().Format(time.RFC3339), a.LoginFailures)}, true
}

// LogDependencies logs each service failing now, once per call, and each
// one that came back: the daemon calls it once per interval.
func (o *Ops) LogDependencies(log *slog.Logger) {
	down := o.down(o.now())
	o.Metrics.deps.mu.Lock()
	was := o.Metrics.deps.logged
	o.Metrics.deps.logged = map[string]bool{}
	for _, d := range down {
		o.Metrics.deps.logged[d.Name] = true
	}
	o.Metrics.deps.mu.Unlock()
	for _, d := range down {
		log.Error("dependency failing", "dependency", d.Name, "since", d.Since.UTC().Format(time.RFC3339),
			"failures", d.Failures, "err", d.Last)
	}
	for name := range was {
		if !o.Metrics.deps.isLogged(name) {
			log.Info("dependency answering again", "dependency", name)
		}
	}
}

func (d *deps) isLogged(name string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.logged[name]
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// cutMessage bounds an outside error's text.
func cutMessage(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
