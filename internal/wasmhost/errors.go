package wasmhost

import (
	"errors"
	"fmt"
)

// Error is the error of every failed load or call. Whatever the kind, a
// failed call returns no data: nothing of it may be used.
type Error struct {
	// Plugin is the plugin's name, or its file while the name is unknown.
	Plugin string
	// Op is the operation: "load", "start", or an export without its
	// "rpengine_" prefix, e.g. "list_nodes".
	Op   string
	Kind Kind
	Msg  string
	// Output is the tail of what the guest wrote to stdout and stderr
	// during the failed call (a Go panic's trace, say). Error omits it.
	Output string
}

// Error names the plugin, the operation and what went wrong.
func (e *Error) Error() string {
	return fmt.Sprintf("plugin %s: %s: %s", e.Plugin, e.Op, e.Msg)
}

// Kind tells the caller what went wrong, for the branches it must take
// (retry, reload, page someone).
type Kind string

const (
	// KindRefused: the module failed a load-time check (ABI version,
	// exports and their signatures, imports).
	KindRefused Kind = "refused"
	// KindTrap: the guest trapped, panicked or exited. The instance was
	// discarded.
	KindTrap Kind = "trap"
	// KindOutOfMemory: the guest ran out of its memory limit. The
	// instance was discarded.
	KindOutOfMemory Kind = "out_of_memory"
	// KindTimeout: the call overran its time limit or the caller's
	// deadline, or the caller gave up. The instance was discarded (with
	// ChildProcess isolation, the plugin host process was killed).
	KindTimeout Kind = "timeout"
	// KindBadAnswer: the answer was malformed, over the size cap, outside
	// guest memory or incomplete. The instance was discarded.
	KindBadAnswer Kind = "bad_answer"
	// KindPlugin: the plugin reported an error in its answer (say, its
	// service was down). The instance is healthy and kept.
	KindPlugin Kind = "plugin_error"
	// KindHost: the host failed (the plugin host process could not start
	// or died, the file could not be read).
	KindHost Kind = "host"
)

// IsKind reports whether err is an *Error of kind k.
func IsKind(err error, k Kind) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == k
}

// failure is an *Error before the plugin's name is known.
func failure(k Kind, format string, args ...any) *Error {
	return &Error{Kind: k, Msg: fmt.Sprintf(format, args...)}
}
