package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/rpengine/rpengine/internal/config"
	"github.com/rpengine/rpengine/internal/ops"
	"github.com/rpengine/rpengine/internal/redact"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// cmdValidate lists every problem it can find offline before it contacts
// anything: the config (every key), the plugin (the file, its load with
// [plugin.config], its ABI, the services it declares against the grants),
// the state file's path and engine.id's syntax (with the config). Then it
// checks the identity and catalog, Placement, nova's writers, the
// plugin's services, the status server's address and etcd; a failed step skips
// only the steps that need it. Each problem is an `error:` line on stderr;
// the exit status is 2 when the config has one, else 1 when anything has.
func cmdValidate(ctx context.Context, path string, asJSON bool, out io.Writer, log *slog.Logger) error {
	v := validation{out: out, errOut: stderrOf(out), t: &tally{}, asJSON: asJSON}
	err := v.run(ctx, path, log)
	if asJSON {
		printJSON(out, validateReport{Config: path, Checks: append([]validateCheck{}, v.t.checks...),
			Problems: v.t.config + v.t.other, ConfigProblems: v.t.config})
	}
	return err
}

// validateReport is `validate -o json`: every check's line, as the text
// prints it, with its level (ok, note, error), and the problem counts.
type validateReport struct {
	Config         string          `json:"config"`
	Checks         []validateCheck `json:"checks"`
	Problems       int             `json:"problems"`
	ConfigProblems int             `json:"config_problems"`
}

// validateCheck is one line of validate: level ok, note or error.
type validateCheck struct {
	Level   string `json:"level"`
	Message string `json:"message"`
}

func (v validation) run(ctx context.Context, path string, log *slog.Logger) error {
	cfg, errs := config.Check(path)
	for _, err := range errs {
		v.configProblem(err)
	}
	if cfg == nil {
		return v.result()
	}
	if len(errs) == 0 {
		v.ok("config %s", path)
	}
	for _, w := range cfg.Warnings() {
		v.note("%s", w)
	}
	v.plugin(ctx, cfg, log)
	v.statePath(cfg)
	v.services(ctx, cfg, log)
	checkListen(cfg, v)
	checkEtcd(ctx, cfg, v)
	return v.result()
}

// validation prints one line per check of `engine validate`: ok and note
// lines on stdout, problems on stderr, counted.
type validation struct {
	out, errOut io.Writer
	t           *tally
	asJSON      bool // keep the lines for validateReport instead of printing them
}

// tally counts the problems found: of the config, and of anything else;
// with -o json it keeps every line.
type tally struct {
	config, other int
	checks        []validateCheck
}

func (v validation) line(w io.Writer, level, prefix, msg string) {
	if v.asJSON {
		v.t.checks = append(v.t.checks, validateCheck{level, msg})
		return
	}
	fmt.Fprintln(w, prefix+msg)
}

func (v validation) ok(format string, args ...any) {
	v.line(v.out, "ok", "ok    ", fmt.Sprintf(format, args...))
}

func (v validation) note(format string, args ...any) {
	v.line(v.out, "note", "note  ", fmt.Sprintf(format, args...))
}

func (v validation) problem(format string, args ...any) {
	v.t.other++
	v.line(v.errOut, "error", "error: ", fmt.Sprintf(format, args...))
}

func (v validation) configProblem(err error) {
	v.t.config++
	v.line(v.errOut, "error", "error: ", err.Error())
}

// result is nil when nothing was wrong; else it counts the problems
// listed, with the exit status they call for.
func (v validation) result() error {
	n := v.t.config + v.t.other
	where := "listed above"
	if v.asJSON {
		where = `the "error" checks of the JSON`
	}
	switch {
	case n == 0:
		return nil
	case v.t.config > 0:
		return configError{fmt.Errorf("%d problem(s) found, %d in the config (%s)", n, v.t.config, where)}
	}
	return fmt.Errorf("%d problem(s) found (%s)", n, where)
}

// plugin loads the plugin with its config, offline: a granted service
// named through the catalog gets an address that never resolves, so the
// load checks the grants without asking Keystone for it.
func (v validation) plugin(ctx context.Context, cfg *config.Config, log *slog.Logger) {
	if fi, err := os.Stat(cfg.Plugin.Path); err != nil || fi.IsDir() {
		return // the config's problem, listed with it
	}
	raw, err := cfg.PluginConfig()
	if err != nil {
		v.problem("plugin.config: %v", err)
		return
	}
	services := map[string]string{}
	for name, u := range cfg.Plugin.Services {
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			u = "https://" + name + ".catalog.invalid" // resolved online, from the catalog
		}
		services[name] = u
	}
	cache := cfg.Plugin.CacheDir
	if cache == "" {
		cache = pluginCacheDir()
	}
	p, err := wasmhost.Load(ctx, cfg.Plugin.Path, raw, wasmhost.Options{MemoryLimit: uint64(cfg.Plugin.MemoryLimit),
		CallTimeout: cfg.Plugin.Timeout.D(), CacheDir: cache, SHA256: cfg.Plugin.SHA256, Services: services, Logger: log})
	if err != nil {
		v.problem("%v", err) // names the plugin's file
		return
	}
	defer p.Close(ctx)
	info := p.Info()
	v.ok("plugin %q version %q loaded with its config (ABI v%d, %s isolation, optional operations: %s)",
		info.Name, info.Version, info.ABIVersion, info.Isolation, operations(info))
	checkServices(info, cfg, v)
}

// statePath checks that the state file can be kept where the config
// says: not a directory, in a directory the engine may create or write
// (the file is replaced by rename, so its directory must be writable).
func (v validation) statePath(cfg *config.Config) {
	p := cfg.Engine.StateFile
	switch {
	case p == "none":
		v.note("engine.state_file = \"none\": the ownership record is kept in memory only")
		return
	case p == "":
		if p = statePath("", cfg.Engine.ID, cfg.Placement.Endpoint.Raw()); p == "" {
			v.note("engine.state_file unset and no home directory: the ownership record is kept in memory only")
			return
		}
	}
	if fi, err := os.Stat(p); err == nil && fi.IsDir() {
		v.problem("engine.state_file %s is a directory; want a file's path", p)
		return
	} else if err == nil && syscall.Access(p, 2) != nil {
		v.problem("engine.state_file %s is not writable", p)
		return
	}
	dir := filepath.Dir(p)
	for {
		fi, err := os.Stat(dir)
		switch {
		case err == nil && !fi.IsDir():
			v.problem("engine.state_file %s: %s is not a directory", p, dir)
			return
		case err == nil && syscall.Access(dir, 3) != nil: // write and search
			v.problem("engine.state_file %s: directory %s is not writable", p, dir)
			return
		case err == nil:
			v.ok("engine.state_file %s can be written", p)
			return
		case !errors.Is(err, fs.ErrNotExist) || filepath.Dir(dir) == dir:
			v.problem("engine.state_file %s: %v", p, err)
			return
		}
		dir = filepath.Dir(dir) // created at the first save
	}
}

// services checks what needs the network, in order; a step that fails
// skips those that need it.
func (v validation) services(ctx context.Context, cfg *config.Config, log *slog.Logger) {
	c, err := openCloud(ctx, cfg, log)
	if err != nil {
		v.problem("auth (%s): %v", cfg.Auth.Method, err)
		return
	}
	defer c.close(ctx)
	v.ok("%s", c.describeAuth())
	for _, r := range c.resolved(cfg) {
		v.ok("catalog: %s", r)
	}
	if pc, err := c.connect(ctx, cfg, nil); err != nil {
		v.problem("%v", err)
	} else {
		v.ok("placement %s at microversion %s", redact.URL(c.placement), pc.Microversion())
		if err := checkNova(ctx, pc, cfg, knownProviders(cfg, c), v); err != nil {
			v.problem("%v", err)
		}
	}
	reachServices(ctx, c.pluginOptions(cfg, log), v)
	checkZones(ctx, cfg, c.pluginOptions(cfg, log), v)
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
	if cfg.Placement.Endpoint.IsZero() {
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
func reachServices(ctx context.Context, o wasmhost.Options, v validation) {
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
		if code, err := reachService(ctx, client, o.Credentials[name], raw); err != nil {
			v.problem("plugin.services.%s: %s %s", name, url, redact.Text(err.Error(), raw)) // Go's client quotes raw
		} else {
			v.ok("service %s at %s answered %d", name, url, code)
		}
		cancel()
	}
}

// reachService asks raw for anything: any answer but 401 will do.
func reachService(ctx context.Context, client *http.Client, cr wasmhost.Credential, raw string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", raw, nil)
	if err != nil {
		return 0, err
	}
	if cr != nil {
		if err := cr.Apply(ctx, req); err != nil {
			return 0, fmt.Errorf("the engine's credentials: %w", err)
		}
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("unreachable: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized {
		return resp.StatusCode, fmt.Errorf("refused the engine's credentials (401)")
	}
	return resp.StatusCode, nil
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
	switch security, err := ops.WebSecurity(cfg.Server.WebConfigFile); {
	case err != nil:
		// listed with the config's problems
	case cfg.Server.WebConfigFile == "":
		v.note("server.listen serves %s: anyone who reaches it reads the status page and may POST /api/v1/cycle", security)
	default:
		v.ok("server.web_config_file %s: %s", cfg.Server.WebConfigFile, security)
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
