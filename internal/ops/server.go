package ops

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/exporter-toolkit/web"
)

// Handler serves /metrics, /healthz, /readyz, /livez, the status page at
// / and the local API under /api/v1/ (api.go).
func (o *Ops) Handler() http.Handler { return o.handler(true) }

func (o *Ops) handler(metrics bool) *http.ServeMux {
	mux := http.NewServeMux()
	if metrics {
		mux.Handle("GET /metrics", o.Metrics.Handler())
	}
	mux.HandleFunc("GET /healthz", probe(o.Healthy))
	mux.HandleFunc("GET /readyz", probe(o.Ready))
	mux.HandleFunc("GET /livez", probe(o.Live))
	mux.HandleFunc("GET /{$}", o.ServeStatus)
	mux.HandleFunc("GET /node/{uuid}", o.ServeNode)
	o.apiRoutes(mux)
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

// ServeConfig is [server]'s say on the HTTP endpoint (docs/SECURITY.md).
type ServeConfig struct {
	// Listen serves the status page, /healthz, /readyz and, unless
	// MetricsListen is set, /metrics.
	Listen string
	// MetricsListen, if set, serves /metrics alone, on its own address.
	MetricsListen string
	// WebConfigFile, if set, is a Prometheus web configuration file: TLS
	// and basic auth for both listeners, as every exporter reads it.
	WebConfigFile string
	// AllowedHosts are Host header names accepted besides the defaults
	// (see hostCheck); "*" accepts any.
	AllowedHosts []string
}

// Serve listens on addr and serves Handler in the background, with
// ServeWith's defaults.
func (o *Ops) Serve(addr string, log *slog.Logger) (bound string, stop func(), err error) {
	b, stop, err := o.ServeWith(ServeConfig{Listen: addr}, log)
	if err != nil {
		return "", nil, err
	}
	return b[0], stop, nil
}

// ServeWith listens as c says and serves in the background. It returns
// once listening (or failing to), so a bad address or web config stops
// the daemon at start; bound are the addresses got (Listen's first, then
// MetricsListen's; they may say port 0). stop shuts the servers down,
// waiting up to five seconds for requests in flight.
func (o *Ops) ServeWith(c ServeConfig, log *slog.Logger) (bound []string, stop func(), err error) {
	if _, err := WebSecurity(c.WebConfigFile); err != nil {
		return nil, nil, err
	}
	type endpoint struct {
		key, addr string
		h         http.Handler
	}
	eps := []endpoint{{"server.listen", c.Listen, o.handler(c.MetricsListen == "")}}
	if c.MetricsListen != "" {
		m := http.NewServeMux()
		m.Handle("GET /metrics", o.Metrics.Handler())
		eps = append(eps, endpoint{"server.metrics_listen", c.MetricsListen, m})
	}
	var stops []func()
	stopAll := func() {
		for _, s := range stops {
			s()
		}
	}
	for _, ep := range eps {
		ln, err := net.Listen("tcp", ep.addr)
		if err != nil {
			stopAll()
			return nil, nil, fmt.Errorf("%s %s: %w", ep.key, ep.addr, err)
		}
		h := guarded(ep.h, newHostCheck(ep.addr, c.AllowedHosts))
		bound = append(bound, ln.Addr().String())
		stops = append(stops, serve(ln, h, c.WebConfigFile, log))
	}
	return bound, stopAll, nil
}

// serve runs one server on ln, with TLS and basic auth if the web config
// says so, until the returned stop.
func serve(ln net.Listener, h http.Handler, webConfig string, log *slog.Logger) (stop func()) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		// The toolkit logs its own start lines at info; the engine's one
		// line says where it serves.
		quiet := slog.New(slog.DiscardHandler)
		if err := web.Serve(ln, srv, &web.FlagConfig{WebConfigFile: &webConfig}, quiet); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("status server stopped", "addr", ln.Addr().String(), "err", err)
		}
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		<-done
	}
}
