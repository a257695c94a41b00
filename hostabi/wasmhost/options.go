package wasmhost

import (
	"io"
	"log/slog"
	"time"
)

// Options bound a plugin. Zero values take the defaults below.
type Options struct {
	// MemoryLimit caps the guest's linear memory, in bytes.
	MemoryLimit uint64
	// CallTimeout bounds every call into the plugin.
	CallTimeout time.Duration
	// CacheDir keeps compiled code between processes ("" = no cache).
	CacheDir string
	// MaxResponse caps the size of one answer from the plugin, in bytes.
	MaxResponse uint32
	// Services maps the service names a plugin may call over HTTP (e.g.
	// "baremetal", "compute") to their endpoints; any other is refused.
	Services map[string]string
	// Logger receives the plugin's log calls; Stderr its raw stderr.
	Logger *slog.Logger
	Stderr io.Writer
}

const (
	DefaultMemoryLimit = 256 << 20
	DefaultCallTimeout = 60 * time.Second
	DefaultMaxResponse = 512 << 20
	pageSize           = 65536
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
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	return o
}
