package wasmhost

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/rpengine/rpengine/hostabi"
)

// Options bound a plugin. Zero values take the defaults below.
type Options struct {
	// MemoryLimit caps the guest's linear memory, in bytes. The guest's Go
	// runtime also gets GOMEMLIMIT at 85% of it, so a live heap that fits
	// does not die of the GC's headroom.
	MemoryLimit uint64
	// CallTimeout bounds every call into the plugin, host calls included.
	CallTimeout time.Duration
	// CacheDir keeps compiled code between processes ("" = no cache).
	CacheDir string
	// MaxResponse caps the size of one answer from the plugin, in bytes.
	MaxResponse uint32
	// Limits bound what one answer may hold, checked while it streams
	// in; the records of one answer may also take at most a quarter of
	// MemoryLimit decoded.
	Limits Limits

	// Services maps the service names a plugin may call over HTTP (e.g.
	// "baremetal", "compute") to their endpoints; any other is refused.
	Services map[string]string
	// Credentials authenticate the plugin's requests, per granted service
	// (a Keystone token, a vCenter session; see Credential). The gate
	// renews one and retries once when the service rejects it. A service
	// mapped to nil gets no credential even with AuthHeader set.
	Credentials map[string]Credential
	// AuthHeader, if set, gives the header that authenticates a request to
	// a service without an entry in Credentials, never renewed. It is
	// called for every request, in the engine process: the plugin never
	// sees it.
	AuthHeader func(service string) (name, value string)
	// HTTPClient performs the plugin's requests (default: a client with
	// keep-alives and no overall timeout; the call's deadline bounds it).
	// Redirects are never followed.
	HTTPClient *http.Client
	// MaxHTTPResponse caps one response body handed to the plugin.
	MaxHTTPResponse int64

	// Clock grants the real wall clock, monotonic clock and sleep. Without
	// it the guest sees wazero's fake clock (it advances 1 ms per read,
	// starting at a fixed date) and sleeps return at once.
	Clock bool

	// Isolation selects how the time limit is enforced; see Isolation.
	Isolation Isolation
	// HostCommand starts the plugin host process for ChildProcess
	// isolation. Default: the running executable. Any binary that links
	// this package serves as the plugin host when started with the
	// environment the engine gives it (see childEnv), so neither the engine
	// nor a test binary needs a hook.
	HostCommand []string

	// SHA256, if set, pins the plugin file's digest (hex): a file with
	// other content is refused at load, reload and plugin host restart.
	SHA256 string

	// JSONAnswers offers the plugin no answer encoding but JSON, as hosts
	// before hostabi.EncodingRecords did: the conformance kit checks that
	// a plugin lists the same either way.
	JSONAnswers bool
	// RawBodies sends every HTTP body to the plugin as the service sent
	// it, ignoring a request's projection (hostabi.HTTPRequestHead.Project),
	// as hosts before projected responses did: the conformance kit checks
	// that a plugin lists the same either way.
	RawBodies bool
	// NoRefs offers no answers by reference (hostabi.EncodingRefs) and
	// keeps no projection, as hosts before them: the plugin answers with
	// its nodes (benchmarks compare both).
	NoRefs bool
	// NodeFields are the optional node fields (an owner, named
	// properties) asked in every list_nodes and read_nodes request; a
	// node carrying one not asked is marked. Asking any offers JSON
	// answers only (ABI.md §4). At most hostabi.MaxProperties properties.
	NodeFields hostabi.NodeFields

	// Logger receives the plugin's log calls and, as attributes of
	// records tagged with the plugin's name (never raw), the lines it
	// writes to stdout and stderr and the plugin host process's stderr.
	Logger *slog.Logger

	// noMemLimit withholds GOMEMLIMIT from the guest, for the test that
	// shows what it prevents.
	noMemLimit bool
}

// Isolation is how a plugin runs, and so how its time limit is enforced.
// RATIONALE.md has the measurements behind the default.
type Isolation int

const (
	// ChildProcess runs the plugin in a child process (the plugin host)
	// that is killed when a call overruns. Guest code runs at full speed;
	// each call costs a pipe round trip (tens of µs).
	ChildProcess Isolation = iota
	// InProcess runs the plugin in the engine process with wazero's
	// WithCloseOnContextDone, which makes Go guest code several times
	// slower. For platforms without the child, and for tests.
	InProcess

	// inProcessUnlimited has no time limit at all: the baseline of the
	// benchmarks, never offered to a caller.
	inProcessUnlimited
)

// String names the isolation as logs and benchmarks print it.
func (i Isolation) String() string {
	switch i {
	case ChildProcess:
		return "child-process"
	case InProcess:
		return "in-process"
	case inProcessUnlimited:
		return "in-process-unlimited"
	}
	return "unknown"
}

// The limits an Options field left zero gets.
const (
	DefaultMemoryLimit     = 256 << 20
	DefaultCallTimeout     = 60 * time.Second
	DefaultMaxResponse     = 512 << 20
	DefaultMaxHTTPResponse = 64 << 20
	pageSize               = 65536

	// compileTimeout bounds compiling a module (seconds cold, tenths of
	// a second from the cache): it is host work, not guest code, so it is
	// not charged to CallTimeout.
	compileTimeout = 5 * time.Minute
)

func (o Options) withDefaults() Options {
	if o.MemoryLimit == 0 {
		o.MemoryLimit = DefaultMemoryLimit
	}
	if o.CallTimeout == 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.MaxResponse == 0 {
		o.MaxResponse = DefaultMaxResponse
	}
	o.Limits = o.Limits.withDefaults()
	if o.MaxHTTPResponse == 0 {
		o.MaxHTTPResponse = DefaultMaxHTTPResponse
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Transport: http.DefaultTransport}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}
