// Package ops is how an operator sees the running engine: Prometheus
// metrics, /healthz and /readyz, a server-rendered status page, the record
// of recent cycles behind them, and what feeds them (a timing wrapper around the plugin; Ops.Observe, the engine's
// Observer, which builds the node table and the drift rows from typed
// events, never from log text). The page: / (health, node table with
// search and filters, drift, cycle timeline), /node/{uuid} (one node).
//
// It only observes. It must never change what a cycle does, hold a lock
// while a cycle waits on it, put a token or a secret on a page, or serve
// anything but GET.
package ops
