// Package redact keeps credentials out of what the engine shows: the
// status page, logs, reports, the state file and metrics. A URL read from
// the config is kept as an Endpoint, which prints redacted however it is
// printed; errors that quote a URL go through Text.
//
// It must never change what is sent: the clients get the raw URL
// (Endpoint.Raw), and a redacted form is for showing only.
package redact
