package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/rpengine/rpengine/internal/config"
)

// healthcheck is a verb of its own, so that a container needs no shell or
// curl to probe the daemon: podman/docker HEALTHCHECK, kolla's
// healthcheck_* and a Kubernetes exec probe all run the binary.
func init() {
	i := slices.IndexFunc(verbs, func(v verb) bool { return v.name == "plugin" })
	verbs = slices.Insert(verbs, i, verb{name: "healthcheck", synopsis: "[live|ready] [--config FILE]",
		summary: "ask the running daemon's /livez (default) or /readyz on server.listen; exit 0 when it answers 200 within 5 s, 1 otherwise",
		example: "engine healthcheck ready --config /etc/rpengine/rpengine.toml",
		flags:   []string{"config"}, operands: 1,
		run: func(ctx context.Context, a args, out io.Writer, _ *slog.Logger) error {
			return cmdHealthcheck(ctx, a, out)
		}})
}

// healthTimeout bounds the whole probe: kolla's and Kubernetes' default
// probe timeouts are longer, so the verb's own answer always arrives.
const healthTimeout = 5 * time.Second

func cmdHealthcheck(ctx context.Context, a args, out io.Writer) error {
	path := map[string]string{"": "/livez", "live": "/livez", "ready": "/readyz"}[strings.Join(a.rest, "")]
	if path == "" {
		return fmt.Errorf("%w: healthcheck takes live or ready, not %q", errUsage, strings.Join(a.rest, " "))
	}
	server, err := config.PeekServer(a.config)
	if err != nil {
		return fmt.Errorf("%w: %v", errConfig, err)
	}
	if server.WebConfigFile != "" {
		return fmt.Errorf("server.web_config_file is set (TLS, basic auth): probe the endpoint with its credentials instead")
	}
	url, err := probeURL(server.Listen, path)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	// A fresh connection each time: a probe must reach the daemon as it
	// is now, not a connection kept from the last one.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	fmt.Fprintf(out, "%s: %d %s", url, resp.StatusCode, body)
	if resp.StatusCode != http.StatusOK {
		return errors.New("not healthy")
	}
	return nil
}

// probeURL is the URL of path on the daemon's listener; a wildcard host
// (0.0.0.0, ::, "") is asked on loopback.
func probeURL(listen, path string) (string, error) {
	if listen == "" {
		return "", fmt.Errorf("server.listen is empty: the daemon serves no probe")
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", fmt.Errorf("server.listen %q: %w", listen, err)
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + path, nil
}
