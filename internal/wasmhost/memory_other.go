//go:build !linux

package wasmhost

import "context"

// withGuestMemory keeps wazero's default allocator off Linux.
func withGuestMemory(ctx context.Context) context.Context { return ctx }
