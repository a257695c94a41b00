package ops

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Handler serves /metrics, /healthz, /readyz, /livez and the status page at /.
func (o *Ops) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", o.Metrics.Handler())
	mux.HandleFunc("GET /healthz", probe(o.Healthy))
	mux.HandleFunc("GET /readyz", probe(o.Ready))
	mux.HandleFunc("GET /livez", probe(o.Live))
	mux.HandleFunc("GET /{$}", o.ServeStatus)
	mux.HandleFunc("GET /node/{uuid}", o.ServeNode)
	return mux
}

// probe answers 200 or 503 with the reason as plain text, which is what
// systemd, Kubernetes and a human with curl all read.
func probe(check func() (bool, string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ok, why := check()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		fmt.Fprintln(w, why)
	}
}

// Serve listens on addr and serves Handler in the background. It returns
// once listening (or failing to), so a bad address stops the daemon at
// start; bound is the address got (addr may say port 0). stop shuts the
// server down, waiting up to five seconds for requests in flight.
func (o *Ops) Serve(addr string, log *slog.Logger) (bound string, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("server.listen %s: %w", addr, err)
	}
	srv := &http.Server{Handler: o.Handler(), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("status server stopped", "err", err)
		}
	}()
	return ln.Addr().String(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		<-done
	}, nil
}
