package wasmhost

import (
	"context"
	"crypto/sha256"
	"io"
	"os"
	"sync"
	"time"

	"github.com/rpengine/rpengine/hostabi"
)

// Reloader serves calls from a plugin and replaces it, on request, with a
// fresh load of the same file: compiled, checked, started and described
// off to the side, it takes over only between calls. A replacement that
// fails to load leaves the current plugin serving, and Reload says why.
// It has the methods of *Plugin the engine uses, so it can stand in for
// one as the engine's source.
//
// A daemon calls Reload from its cycle loop, when Watch asks, so a swap
// never falls inside a cycle:
//
//	reloads := r.Watch(ctx, hup, 2*time.Second)
//	for {
//		cycle(r)
//		select {
//		case why := <-reloads:
//			if err := r.Reload(ctx); err != nil {
//				log.Error("plugin not replaced; the old one keeps serving", "reason", why, "err", err)
//			}
//		case <-time.After(interval):
//		}
//	}
type Reloader struct {
	path   string
	config []byte
	opts   Options

	mu  sync.RWMutex // held for reading by every call, for writing by the swap
	cur *Plugin

	stampMu sync.Mutex
	tried   stamp // the file as last loaded, or last tried
}

// NewReloader loads the plugin at path as Load does.
func NewReloader(ctx context.Context, path string, config []byte, opts Options) (*Reloader, error) {
	r := &Reloader{path: path, config: config, opts: opts}
	r.tried, _ = stampOf(path, stamp{})
	p, err := Load(ctx, path, config, opts)
	if err != nil {
		return nil, err
	}
	r.cur = p
	return r, nil
}

// Reload loads the plugin file again and, if that succeeds, swaps the new
// plugin in once the call in flight (if any) returns, then closes the old
// one. On failure the current plugin keeps serving.
func (r *Reloader) Reload(ctx context.Context) error {
	st, _ := stampOf(r.path, r.stamp())
	r.setStamp(st)
	next, err := Load(ctx, r.path, r.config, r.opts)
	if err != nil {
		return err
	}
	r.mu.Lock()
	old := r.cur
	r.cur = next
	r.mu.Unlock()
	return old.Close(ctx)
}

// Changed reports whether the plugin file's content differs from the one
// last loaded or tried (a touch without a change is no change).
func (r *Reloader) Changed() bool {
	_, changed := r.changed()
	return changed
}

func (r *Reloader) changed() ([sha256.Size]byte, bool) {
	old := r.stamp()
	st, err := stampOf(r.path, old)
	if err != nil {
		return old.sum, false
	}
	if st.sum == old.sum {
		r.setStamp(st) // remember a touch, to skip the hash next time
		return old.sum, false
	}
	return st.sum, true
}

// Watch asks for a reload (sending the reason) on every signal from hup
// (nil: none) and when the file's content changes, polled every poll (0:
// never), until ctx ends. Requests that pile up while one is pending
// coalesce. Watch never reloads by itself; the caller picks the moment.
func (r *Reloader) Watch(ctx context.Context, hup <-chan os.Signal, poll time.Duration) <-chan string {
	out := make(chan string, 1)
	ask := func(why string) {
		select {
		case out <- why:
		default:
		}
	}
	var tick <-chan time.Time
	if poll > 0 {
		t := time.NewTicker(poll)
		tick = t.C
		context.AfterFunc(ctx, t.Stop)
	}
	go func() {
		var asked [sha256.Size]byte // ask once per new content
		for {
			select {
			case <-ctx.Done():
				return
			case sig := <-hup:
				ask(sig.String())
			case <-tick:
				if sum, changed := r.changed(); changed && sum != asked {
					asked = sum
					ask("plugin file changed")
				}
			}
		}
	}()
	return out
}

// Current is the plugin serving now.
func (r *Reloader) Current() *Plugin {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.cur
}

func (r *Reloader) ListNodes(ctx context.Context, req hostabi.ListNodesRequest) ([]hostabi.Node, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.cur.ListNodes(ctx, req)
}

func (r *Reloader) ListInstances(ctx context.Context) ([]hostabi.Instance, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.cur.ListInstances(ctx)
}

func (r *Reloader) ConfirmDeleted(ctx context.Context, uuids []string) (deleted, present []string, err error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.cur.ConfirmDeleted(ctx, uuids)
}

func (r *Reloader) Supports(export string) bool { return r.Current().Supports(export) }
func (r *Reloader) Name() string                { return r.Current().Name() }
func (r *Reloader) Info() Info                  { return r.Current().Info() }

// Close closes the current plugin.
func (r *Reloader) Close(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cur.Close(ctx)
}

func (r *Reloader) stamp() stamp {
	r.stampMu.Lock()
	defer r.stampMu.Unlock()
	return r.tried
}

func (r *Reloader) setStamp(s stamp) {
	r.stampMu.Lock()
	defer r.stampMu.Unlock()
	r.tried = s
}

// stamp identifies a file's content; size and mtime spare a hash when
// nothing moved.
type stamp struct {
	size  int64
	mtime time.Time
	sum   [sha256.Size]byte
}

func stampOf(path string, prev stamp) (stamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return stamp{}, err
	}
	if fi.Size() == prev.size && fi.ModTime().Equal(prev.mtime) {
		return prev, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return stamp{}, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return stamp{}, err
	}
	s := stamp{size: fi.Size(), mtime: fi.ModTime()}
	copy(s.sum[:], h.Sum(nil))
	return s, nil
}
