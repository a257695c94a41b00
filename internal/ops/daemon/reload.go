package daemon

import (
	"context"
)

// reloader loads new setups beside the running one, one at a time, and
// hands a loaded one to the loop, which swaps it in between cycles.
type reloader struct {
	loop    *Loop
	ctx     context.Context
	stop    <-chan struct{}
	results chan loaded
	loading bool  // a load is running
	again   bool  // a reload was asked for during it
	next    Setup // loaded, waiting for the cycle to end
}

// request starts a load, or notes one more is wanted: the config file may
// have changed again since the running load read it.
func (r *reloader) request(current Setup) {
	if r.loading {
		r.again = true
		return
	}
	r.loading = true
	r.loop.Log.Info("reload: loading the new configuration and plugin beside the running ones")
	prev := current
	if r.next != nil {
		prev = r.next
	}
	go func() {
		w, err := r.loop.Load(r.ctx, r.stop, prev)
		r.results <- loaded{w, err}
	}()
}

// finished takes a load's result: a failure keeps the running setup.
func (r *reloader) finished(res loaded, current Setup) {
	r.loading = false
	r.loop.Ops.Reloaded(res.err)
	if res.err != nil {
		r.loop.Log.Error("reload failed: keeping the running configuration and plugin", "err", res.err)
	} else {
		if r.next != nil {
			r.next.Close(context.Background())
		}
		r.next = res.w
		r.loop.Log.Info("reload: loaded; it takes over at the next cycle")
	}
	if r.again {
		r.again = false
		r.request(current)
	}
}

// swap returns the setup to use next: the loaded one if any.
func (r *reloader) swap(current Setup) Setup {
	if r.next == nil {
		return current
	}
	w := r.next
	r.next = nil
	r.loop.activate(w, current)
	r.loop.Log.Info("reload: new configuration in use")
	return w
}

// abandon closes a setup loaded but never used, and one still loading
// when it arrives.
func (r *reloader) abandon() {
	if r.next != nil {
		r.next.Close(context.Background())
		r.next = nil
	}
	if r.loading {
		go func() {
			if res := <-r.results; res.w != nil {
				res.w.Close(context.Background())
			}
		}()
	}
}
