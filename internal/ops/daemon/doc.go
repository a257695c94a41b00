// Package daemon is the engine's run loop: a cycle every interval with
// jitter; on stop (SIGTERM) the cycle under way starts no new provider,
// lets the ones in flight finish, saves the cache and returns; on reload
// (SIGHUP) a new configuration and plugin are loaded beside the running
// ones and swapped in between cycles, or, if they fail to load, the old
// ones stay and the failure is logged.
//
// It must never cancel a Placement write because of a stop before
// engine.stop_timeout has passed, drop or delay a cycle for a reload, or
// run two cycles at once.
package daemon
