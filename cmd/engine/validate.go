package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/rpengine/rpengine/internal/config"
	"github.com/rpengine/rpengine/internal/redact"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// validation prints one line per check of `engine validate`.
type validation struct{ out io.Writer }

func (v validation) ok(format string, args ...any) { fmt.Fprintf(v.out, "ok    "+format+"\n", args...) }
func (v validation) note(format string, args ...any) {
	fmt.Fprintf(v.out, "note  "+format+"\n", args...)
}

// describeAuth says who the engine is, and for how long, without secrets.
func (c *cloud) describeAuth() string {
	if exp := c.sess.Expires(); !exp.IsZero() {
		return fmt.Sprintf("auth: %s; token valid until %s", c.sess, exp.UTC().Format(time.RFC3339))
	}
	return "auth: " + c.sess.String()
}

// resolved lists the endpoints that came from the catalog.
func (c *cloud) resolved(cfg *config.Config) []string {
	var out []string
	if cfg.Placement.Endpoint == "" {
		out = append(out, "placement = "+redact.URL(c.placement))
	}
	for name, v := range cfg.Plugin.Services {
		if c.services[name] != v {
			out = append(out, fmt.Sprintf("plugin.services.%s (%s) = %s", name, v, redact.URL(c.services[name])))
		}
	}
	sort.Strings(out)
	return out
}

// reachServices asks each granted service's endpoint for anything, with
// the token the plugin's calls carry: any answer but 401 proves the
// network path, TLS and, where checked, the token.
func reachServices(ctx context.Context, o wasmhost.Options, v validation) error {
	client := o.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	names := make([]string, 0, len(o.Services))
	for name := range o.Services {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		raw := o.Services[name]
		url := redact.URL(raw) // what the messages show
		ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		req, err := http.NewRequestWithContext(ctx, "GET", raw, nil)
		if err != nil {
			cancel()
			return fmt.Errorf("plugin.services.%s: %w", name, err)
		}
		if cr := o.Credentials[name]; cr != nil {
			if err := cr.Apply(ctx, req); err != nil {
				cancel()
				return fmt.Errorf("plugin.services.%s: the engine's credentials: %w", name, err)
			}
		}
		resp, err := client.Do(req)
		cancel()
		if err != nil {
			return fmt.Errorf("plugin.services.%s: %s unreachable: %w", name, url, err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusUnauthorized {
			return fmt.Errorf("plugin.services.%s: %s refused the engine's credentials (401)", name, url)
		}
		v.ok("service %s at %s answered %d", name, url, resp.StatusCode)
	}
	return nil
}

// checkListen tries the status server's address. In use is only a note:
// the daemon itself may hold it.
func checkListen(cfg *config.Config, v validation) {
	if cfg.Server.Listen == "" {
		v.note("server.listen not set: no metrics, health checks or status page")
		return
	}
	for _, l := range [][2]string{{"server.listen", cfg.Server.Listen}, {"server.metrics_listen", cfg.Server.MetricsListen}} {
		key, addr := l[0], l[1]
		if addr == "" {
			continue
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			v.note("%s %s: %v (a running daemon may hold it)", key, addr, err)
			continue
		}
		ln.Close()
		v.ok("%s %s is free", key, addr)
	}
	if cfg.Server.WebConfigFile != "" {
		v.ok("server.web_config_file %s: TLS and basic auth as it says", cfg.Server.WebConfigFile)
	}
}

func operations(info wasmhost.Info) string {
	if len(info.Operations) == 0 {
		return "none"
	}
	ops := make([]string, len(info.Operations))
	for i, op := range info.Operations {
		ops[i] = strings.TrimPrefix(op, "rpengine_")
	}
	return strings.Join(ops, ", ")
}
