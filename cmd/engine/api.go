package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/config"
	"github.com/rpengine/rpengine/internal/ops"
	"github.com/rpengine/rpengine/internal/ops/daemon"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// The daemon's side of the local API (internal/ops/api.go): its plans
// run in the loop between cycles, on the engine in use, so they see its
// scope, holds and memory, and change none of it (engine.Plan).

// listingsKey carries the recordingSource a plan the API asked for
// fills with the plugin's listings, for explain.
type listingsKey struct{}

// tappedPlugin is the daemon's plugin: it hands the listings of a plan
// to the recordingSource in its context, and is the plugin otherwise.
type tappedPlugin struct{ *wasmhost.Plugin }

func (t tappedPlugin) ListNodes(ctx context.Context, req hostabi.ListNodesRequest) ([]hostabi.Node, error) {
	ns, err := t.Plugin.ListNodes(ctx, req)
	if s, ok := ctx.Value(listingsKey{}).(*recordingSource); ok {
		s.nodes = ns
	}
	return ns, err
}

func (t tappedPlugin) ListInstances(ctx context.Context) ([]hostabi.Instance, error) {
	is, err := t.Plugin.ListInstances(ctx)
	if s, ok := ctx.Value(listingsKey{}).(*recordingSource); ok {
		s.instances = is
	}
	return is, err
}

// daemonPlan is one plan of the daemon, with the listings it decided
// from: the API's plan and explanations answer from it.
type daemonPlan struct {
	w   *daemonSetup
	r   engine.Report
	src *recordingSource
}

func (p *daemonPlan) Report(node string) (any, error) {
	r := filterReport(p.r, node)
	if node != "" && len(r.Outcomes) == 0 && len(r.Errors) == 0 {
		return nil, unknownNode{fmt.Sprintf("node %q: not in scope: the plugin does not list it and this engine has no provider of that uuid", node)}
	}
	return r, nil
}

func (p *daemonPlan) Explain(ctx context.Context, node string) (any, error) {
	x, err := explain(ctx, node, p.r, p.w.eng, p.src, p.w.assembly)
	if err == nil && p.w.drift != nil {
		x.Drift = p.w.drift.of(x.Node) // observe mode: since when, which a plan cannot tell
	}
	return x, err
}

// planThrough is the API's Plan: it asks the loop for a plan between
// cycles, waiting for the cycle in flight to end.
func planThrough(asks chan<- daemon.Ask, log *slog.Logger) func(ctx context.Context) (ops.Plan, error) {
	return func(ctx context.Context) (ops.Plan, error) {
		res := make(chan ops.Plan, 1)
		ask := func(loop context.Context, s daemon.Setup) {
			w, ok := unwrap(s).(*daemonSetup)
			if !ok {
				res <- nil
				return
			}
			pctx, cancel := context.WithCancel(loop) // the stop ends it too
			defer cancel()
			defer context.AfterFunc(ctx, cancel)()
			src := &recordingSource{}
			r := w.eng.Plan(context.WithValue(pctx, listingsKey{}, src))
			log.Info("plan made for the API", "nodes", r.Nodes, "writes", len(r.Writes), "errors", len(r.Errors),
				"placement_requests", r.PlacementRequests, "duration_ms", r.DurationMS)
			res <- &daemonPlan{w: w, r: r, src: src}
		}
		select {
		case asks <- ask:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the cycle in flight to end: %w", ctx.Err())
		}
		p := <-res
		if p == nil {
			return nil, ops.ErrNotReady
		}
		return p, nil
	}
}

// cycleNow is the API's CycleNow: a request on SIGUSR1's channel, which
// holds one, so requests merge.
func cycleNow(now chan struct{}) func() bool {
	return func() bool {
		select {
		case now <- struct{}{}:
			return true
		default:
			return false
		}
	}
}

// maxAPIAnswer bounds what a verb reads from the daemon's API: a plan of
// 100,000 nodes is tens of MiB.
const maxAPIAnswer = 1 << 30

// fromDaemon asks the engine running cfg for path (under /api/v1/) and
// decodes its answer into v. asked is false, with no error, when no such
// engine answers on server.listen (none runs, another program listens,
// or it is older), or when the answer does not prove the daemon's API key
// (apikey.go): the verb then reads the state itself. With
// server.web_config_file (TLS, basic auth) the verb reads it itself too.
func fromDaemon(ctx context.Context, cfg *config.Config, path string, v any, log *slog.Logger) (asked bool, addr string, err error) {
	keyPath := apiKeyPath(cfg)
	if cfg.Server.Listen == "" || cfg.Server.WebConfigFile != "" || keyPath == "" {
		return false, "", nil
	}
	addr = dialAddr(cfg.Server.Listen)
	client := &http.Client{Transport: &http.Transport{Proxy: nil, DialContext: (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
		ResponseHeaderTimeout: ops.PlanTimeout + time.Minute}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/api/v1/"+path, nil)
	if err != nil {
		return false, "", err
	}
	nonce := rand.Text()
	req.Header.Set(ops.ChallengeHeader, nonce)
	resp, err := client.Do(req)
	if err != nil {
		return false, "", nil // nobody there
	}
	defer resp.Body.Close()
	if resp.Header.Get(ops.EngineIDHeader) != cfg.Engine.ID {
		return false, "", nil // not this engine's API
	}
	if !provedBy(keyPath, nonce, resp.Header.Get(ops.ProofHeader)) {
		log.Warn("server.listen answers as this engine but does not prove the daemon's key: its answer is ignored",
			"addr", addr, "key", keyPath)
		return false, "", nil
	}
	if a, ok := v.(*daemonAnswer); ok {
		a.config, a.sha256 = resp.Header.Get(ops.ConfigHeader), resp.Header.Get(ops.ConfigSHA256Header)
		v = a.v
	}
	body := io.LimitReader(resp.Body, maxAPIAnswer)
	switch resp.StatusCode {
	case http.StatusOK:
		if err := json.NewDecoder(body).Decode(v); err != nil {
			return true, addr, fmt.Errorf("the engine running at %s: its answer: %w", addr, err)
		}
		return true, addr, nil
	case http.StatusServiceUnavailable:
		return false, "", nil // not planning yet (loading), or stopping
	}
	var e struct{ Error string }
	json.NewDecoder(body).Decode(&e)
	if resp.StatusCode == http.StatusNotFound && e.Error != "" {
		return true, addr, unknownNode{e.Error}
	}
	return true, addr, fmt.Errorf("the engine running at %s: %s: %s", addr, resp.Status, e.Error)
}

// dialAddr is where a verb reaches server.listen: a wildcard address is
// reached on the loopback.
func dialAddr(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return listen
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// apiNodePath is the explain path of node.
func apiNodePath(node string) string { return "explain/" + url.PathEscape(node) }

// pageReader is the Placement client of the setup in use and its owner
// trait, for the node page's allocations.
type pageReader struct {
	pc    *placement.Client
	owner string
}

// pageAllocations reads a node's allocations for the status page with
// the setup in use (none before the first setup is loaded).
func pageAllocations(current *atomic.Pointer[pageReader]) func(ctx context.Context, uuid string) ([]ops.Allocation, error) {
	return func(ctx context.Context, uuid string) ([]ops.Allocation, error) {
		r := current.Load()
		if r == nil {
			return nil, ops.ErrNotReady
		}
		allocs, err := readAllocations(ctx, r.pc, r.owner, uuid)
		if err != nil {
			return nil, err
		}
		out := make([]ops.Allocation, len(allocs))
		for i, a := range allocs {
			out[i] = ops.Allocation{Consumer: a.Consumer, Type: a.Type, Project: a.Project, Resources: a.Resources, Hold: a.Hold}
		}
		return out, nil
	}
}

// pageProvider reads a node's provider for the status page with the
// setup in use: inventory, traits and aggregates, as a cycle reads them.
func pageProvider(current *atomic.Pointer[pageReader]) func(ctx context.Context, uuid string) (engine.Observed, error) {
	return func(ctx context.Context, uuid string) (engine.Observed, error) {
		r := current.Load()
		if r == nil {
			return engine.Observed{}, ops.ErrNotReady
		}
		gen, inv, err := r.pc.Inventories(ctx, uuid)
		if errors.Is(err, placement.ErrNotFound) {
			return engine.Observed{}, nil
		}
		if err != nil {
			return engine.Observed{}, err
		}
		_, traits, err := r.pc.Traits(ctx, uuid)
		if err != nil {
			return engine.Observed{}, err
		}
		_, aggs, err := r.pc.Aggregates(ctx, uuid)
		if err != nil {
			return engine.Observed{}, err
		}
		return engine.Observed{Exists: true, Generation: gen, Inventory: inv, Traits: traits, Aggregates: aggs}, nil
	}
}

// daemonAnswer wraps the value fromDaemon decodes into, to keep also
// which config file the daemon's setup was loaded from and its hash then.
type daemonAnswer struct {
	v              any
	config, sha256 string
}

// configNote says which config the daemon answered with and, when the
// file at path no longer holds what the daemon loaded, warns that the
// answer is not the file's (log records: stdout keeps the answer alone).
func configNote(log *slog.Logger, a daemonAnswer, path, addr string) {
	if a.config == "" {
		return // an older daemon: it does not say
	}
	log.Info("answered by the engine running at server.listen, with its loaded config", "addr", addr, "config", a.config)
	if now := fileSHA256(path); now != a.sha256 || absPath(path) != a.config {
		log.Warn("the config file differs from the one the running engine loaded: this answer is the running engine's; "+
			"send it SIGHUP (systemctl reload rpengine) to load the file, or stop it to plan with the file",
			"file", absPath(path), "loaded", a.config)
	}
}

// fileSHA256 is the hex SHA-256 of the file's content, "" if unreadable.
func fileSHA256(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// absPath is path made absolute (as given when that fails).
func absPath(path string) string {
	if p, err := filepath.Abs(path); err == nil {
		return p
	}
	return path
}
