// Package ops is how an operator sees the running engine: Prometheus
// metrics, /healthz and /readyz, a server-rendered status page, the record
// of recent cycles behind them, and the decorators and log taps that feed
// them (a timing wrapper around the plugin, a slog handler that notes the
// providers written).
//
// It only observes. It must never change what a cycle does, hold a lock
// while a cycle waits on it, put a token or a secret on a page, or serve
// anything but GET.
package ops
