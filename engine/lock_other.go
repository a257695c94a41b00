//go:build !unix

package engine

// lockState is a no-op where flock is not available.
func lockState(string) error { return nil }

// syncDir is a no-op where directories cannot be synced.
func syncDir(string) error { return nil }
