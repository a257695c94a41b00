package engine

import "time"

// The defaults of Options, and of the [engine] keys that set them
// (internal/config uses these): one place for each number.
const (
	DefaultConcurrency = 4
	DefaultMaxAttempts = 6
	DefaultDeleteGrace = 5 * time.Minute
	DefaultDeleteLimit = 0.1
)
