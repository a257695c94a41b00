// Package config reads the engine's TOML configuration strictly: unknown
// keys, wrong types, bad durations and bad sizes are errors that name the
// key. Relative paths are resolved against the config file's directory.
//
// It must never guess: a value it cannot parse is an error, not a default.
package config
