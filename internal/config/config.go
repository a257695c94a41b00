package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/internal/redact"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// Config is the whole file. See README.md for every key.
type Config struct {
	Engine    Engine    `toml:"engine"`
	Scope     Scope     `toml:"scope"`
	Provider  Provider  `toml:"provider"`
	Placement Placement `toml:"placement"`
	Plugin    Plugin    `toml:"plugin"`
	Auth      Auth      `toml:"auth"`
	Server    Server    `toml:"server"`
	Log       Log       `toml:"log"`
	Coord     Coord     `toml:"coord"`
	Nova      Nova      `toml:"nova"`
	Events    Events    `toml:"events"`

	// pluginOnly: loaded by LoadPlugin, for what runs the plugin alone.
	pluginOnly bool
	// secretFiles were read for [auth]; warnings are from Load.
	secretFiles []string
	warnings    []string
}

// Engine is the [engine] table: identity, pacing and deletion rules.
type Engine struct {
	ID          string    `toml:"id"`
	Interval    Duration  `toml:"interval"`
	Concurrency int       `toml:"concurrency"`
	MaxAttempts int       `toml:"max_attempts"`
	StateFile   string    `toml:"state_file"`
	DeleteGrace Duration  `toml:"delete_grace"`
	DeleteLimit float64   `toml:"delete_limit"`
	StopTimeout Duration  `toml:"stop_timeout"`
	MemoryLimit SoftLimit `toml:"memory_limit"`
	// Mode is "run" (reconcile: write Placement) or "observe" (never
	// write; report the drift each cycle would correct).
	Mode string `toml:"mode"`
}

// Scope is the [scope] table: the shards and conductor groups managed.
type Scope struct {
	Shards          []string `toml:"shards"`
	ConductorGroups []string `toml:"conductor_groups"`
}

// Provider is the [provider] table: what every provider also gets.
type Provider struct {
	MarkerTraits []string `toml:"marker_traits"`
	Aggregates   []string `toml:"aggregates"`

	// AggregateRules add aggregates by the node's fields (aggregates.go).
	AggregateRules []AggregateRule `toml:"aggregate_rules"`
}

// Placement is the [placement] table: where and how to reach Placement.
type Placement struct {
	// Endpoint prints redacted from the moment it is read; Raw() is for
	// the Placement client alone.
	Endpoint    redact.Endpoint `toml:"endpoint"`
	Token       string          `toml:"token"`
	Timeout     Duration        `toml:"timeout"`
	Connections int             `toml:"connections"`
	// NewNamesPerCycle caps the custom traits and resource classes
	// created per cycle; the rest wait for later cycles (0: default).
	NewNamesPerCycle int `toml:"new_names_per_cycle"`
	// MaxResponse caps one answer's body; MaxProviders one listing's
	// providers. A larger answer is refused whole and the cycle writes
	// nothing (docs/SECURITY.md).
	MaxResponse  Size `toml:"max_response"`
	MaxProviders int  `toml:"max_providers"`
}

// Plugin is the [plugin] table: the plugin file, its limits and grants.
type Plugin struct {
	Path string `toml:"path"`
	// SHA256, if set, pins the plugin file's digest: other content is
	// refused at load and at every reload (docs/SECURITY.md).
	SHA256      string   `toml:"sha256"`
	Timeout     Duration `toml:"timeout"`
	MemoryLimit Size     `toml:"memory_limit"`
	CacheDir    string   `toml:"cache_dir"`
	// Clock grants the real clock; without it the plugin sees a fake one.
	Clock bool `toml:"clock"`
	// MaxResponse caps one answer of the plugin; MaxHTTPResponse one HTTP
	// response body handed to it.
	MaxResponse     Size `toml:"max_response"`
	MaxHTTPResponse Size `toml:"max_http_response"`
	// MaxRecords, MaxFieldLength and MaxTraits bound one answer: entries
	// of a listing, bytes of any string, traits per node (0: defaults).
	MaxRecords     int `toml:"max_records"`
	MaxFieldLength int `toml:"max_field_length"`
	MaxTraits      int `toml:"max_traits"`
	// Services grants the plugin HTTP access to these services, by name:
	// their endpoints, filled from Grants (grants.go).
	Services map[string]string `toml:"-"`
	// Grants are [plugin.services] as written: endpoint and credential.
	Grants map[string]Grant `toml:"services"`
	Config map[string]any   `toml:"config"`
	// ReloadOnChange reloads (as SIGHUP) when the plugin file's content
	// changes; the same bytes rewritten do not count.
	ReloadOnChange bool `toml:"reload_on_change"`
}

// Load reads and checks the file at path.
func Load(path string) (*Config, error) { return load(path, false) }

// LoadPlugin is Load for a command that runs the plugin alone (engine
// plugin test): Placement is not needed, so placement.endpoint is not
// required and PluginOnly is true.
func LoadPlugin(path string) (*Config, error) { return load(path, true) }

// PluginOnly reports a config from LoadPlugin: nothing may call Placement.
func (c *Config) PluginOnly() bool { return c.pluginOnly }

func load(path string, pluginOnly bool) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	c, err := parse(string(b), filepath.Dir(path), pluginOnly)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	c.warnReadable(path)
	return c, nil
}

// Parse reads TOML text; dir resolves relative paths.
func Parse(text, dir string) (*Config, error) { return parse(text, dir, false) }

func parse(text, dir string, pluginOnly bool) (*Config, error) {
	c, errs := parseAll(text, dir, pluginOnly)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return c, nil
}

// Check reads the file at path as Load does, but returns every problem
// it finds, each naming its key, and the config as far as it could be
// read (nil when the file cannot be read or is not TOML): `engine
// validate` lists them all, and goes on checking what the config names.
func Check(path string) (*Config, []error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, []error{fmt.Errorf("config: %w", err)}
	}
	c, errs := parseAll(string(b), filepath.Dir(path), false)
	if c != nil {
		c.warnReadable(path)
	}
	return c, errs
}

// parseAll decodes text and checks every key; a problem of one key does
// not hide those of the others. The config is nil only when text is not
// TOML.
func parseAll(text, dir string, pluginOnly bool) (*Config, []error) {
	c := defaults()
	c.pluginOnly = pluginOnly
	md, errs, fatal := decodeAll(text, c)
	if fatal {
		return nil, errs
	}
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	add(unknownKeys(md))
	c.resolve(dir)
	add(c.readSecrets(dir))
	add(c.readCoordPassword(dir))
	add(c.grantsToServices(func(p string) string { return expandCredentials(p, dir) }))
	errs = append(errs, c.checks()...)
	errs = append(errs, c.checkEvents(dir)...)
	return c, errs
}

func defaults() *Config {
	return &Config{
		Engine: Engine{ID: "default", Mode: "run", Interval: Duration(60 * time.Second), Concurrency: engine.DefaultConcurrency,
			MaxAttempts: engine.DefaultMaxAttempts, DeleteGrace: Duration(engine.DefaultDeleteGrace),
			DeleteLimit: engine.DefaultDeleteLimit, StopTimeout: Duration(60 * time.Second)},
		Placement: Placement{Timeout: Duration(placement.DefaultTimeout), Connections: placement.DefaultMaxConns,
			MaxResponse: placement.DefaultMaxResponse, MaxProviders: placement.DefaultMaxProviders},
		Plugin: Plugin{Timeout: Duration(wasmhost.DefaultCallTimeout), MemoryLimit: wasmhost.DefaultMemoryLimit, ReloadOnChange: true},
		Auth:   Auth{Method: "noauth", RefreshBefore: Duration(5 * time.Minute), Timeout: Duration(30 * time.Second)},
		Server: Server{UnhealthyAfter: 3, History: 50},
		Log:    Log{Level: "info", Format: "text"},
		Coord:  defaultCoord(),
		Events: defaultEvents(),
	}
}

func unknownKeys(md toml.MetaData) error {
	var bad []string
	for _, k := range md.Undecoded() {
		// [plugin.config] belongs to the plugin, which checks it itself.
		if s := k.String(); !strings.HasPrefix(s, "plugin.config.") {
			bad = append(bad, s)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	bad = slices.Compact(bad)
	known := knownKeys()
	for i, k := range bad {
		if near := Nearest(k, known); near != "" {
			bad[i] = fmt.Sprintf("%s (did you mean %s?)", k, near)
		}
	}
	return fmt.Errorf("unknown key(s): %s", strings.Join(bad, ", "))
}

func (c *Config) resolve(dir string) {
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	c.Plugin.Path = abs(c.Plugin.Path)
	c.Plugin.CacheDir = abs(c.Plugin.CacheDir)
	if c.Engine.StateFile != "none" {
		c.Engine.StateFile = abs(c.Engine.StateFile)
	}
	c.Auth.CloudsFile = abs(c.Auth.CloudsFile)
	c.Auth.CACert = abs(c.Auth.CACert)
	c.Server.WebConfigFile = abs(c.Server.WebConfigFile)
}

// checks lists the problems of the decoded values, one per key.
func (c *Config) checks() []error {
	var errs []error
	req := func(ok bool, key, msg string) {
		if !ok {
			errs = append(errs, fmt.Errorf("%s: %s", key, msg))
		}
	}
	errs = append(errs, checkID(c.Engine.ID)...)
	req(c.Engine.Interval > 0, "engine.interval", "must be positive")
	req(c.Engine.Concurrency > 0, "engine.concurrency", "must be at least 1")
	req(c.Engine.MaxAttempts > 0, "engine.max_attempts", "must be at least 1")
	req(c.Engine.DeleteGrace >= 0, "engine.delete_grace", "must not be negative")
	req(c.Engine.DeleteLimit > 0 && c.Engine.DeleteLimit <= 1, "engine.delete_limit", "must be in (0, 1]")
	req(c.Engine.StopTimeout > 0, "engine.stop_timeout", "must be positive")
	req(!c.Placement.Endpoint.IsZero() || c.Auth.Method != "noauth" || c.pluginOnly, "placement.endpoint",
		"is required with auth.method = \"noauth\" (with Keystone, the catalog supplies it)")
	req(c.Placement.Timeout > 0, "placement.timeout", "must be positive")
	req(c.Placement.Connections > 0, "placement.connections", "must be at least 1")
	req(c.Plugin.Path != "", "plugin.path", "is required")
	req(c.Plugin.SHA256 == "" || wasmhost.ValidSHA256(c.Plugin.SHA256), "plugin.sha256",
		"must be 64 hex digits, as `engine plugin inspect` prints")
	req(c.Plugin.Timeout > 0, "plugin.timeout", "must be positive")
	req(c.Engine.Mode == "run" || c.Engine.Mode == "observe", "engine.mode", fmt.Sprintf("%q; want \"run\" or \"observe\"", c.Engine.Mode))
	req(c.Plugin.MemoryLimit >= 16<<20, "plugin.memory_limit", "must be at least 16MiB")
	req(c.Plugin.MaxRecords >= 0, "plugin.max_records", "must not be negative")
	req(c.Plugin.MaxFieldLength >= 0, "plugin.max_field_length", "must not be negative")
	req(c.Plugin.MaxTraits >= 0, "plugin.max_traits", "must not be negative")
	req(c.Placement.NewNamesPerCycle >= 0, "placement.new_names_per_cycle", "must not be negative")
	req(c.Placement.MaxResponse >= 1<<20, "placement.max_response", "must be at least 1MiB")
	req(c.Placement.MaxProviders > 0, "placement.max_providers", "must be at least 1")
	if c.Plugin.Path != "" {
		if fi, err := os.Stat(c.Plugin.Path); err != nil {
			errs = append(errs, fmt.Errorf("plugin.path: %w (build it with `make plugins`)", err))
		} else if fi.IsDir() {
			errs = append(errs, fmt.Errorf("plugin.path is a directory (%s); want the plugin's .wasm file", c.Plugin.Path))
		}
	}
	errs = append(errs, c.checkAuth()...)
	errs = append(errs, c.checkOps()...)
	errs = append(errs, c.checkGrants()...)
	errs = append(errs, c.checkCoord()...)
	errs = append(errs, c.checkNova()...)
	errs = append(errs, c.checkFleet()...)
	errs = append(errs, c.checkAggregates()...)
	return errs
}

// PluginConfig is [plugin.config] as JSON, the form the plugin receives.
func (c *Config) PluginConfig() ([]byte, error) {
	if c.Plugin.Config == nil {
		return []byte("{}"), nil
	}
	return json.Marshal(c.Plugin.Config)
}
