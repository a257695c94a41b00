package wasmhost

import (
	"context"
	"syscall"

	"github.com/tetratelabs/wazero/experimental"
)

// withGuestMemory makes each instance's linear memory one private
// anonymous mapping of its maximum size, outside the Go heap: growing it
// never copies, pages count only once the guest touches them, and closing
// the instance returns them to the kernel at once. wazero's default, a Go
// slice grown by append, copied the whole memory on each growth and left
// the old copies to the host's GC, whose target doubles with the live
// guest memory: an idle plugin host grew from 70 MB to 1 GB over 270
// cycles of a 512 MiB plugin (RATIONALE.md, "Guest memory outside the Go
// heap").
func withGuestMemory(ctx context.Context) context.Context {
	return experimental.WithMemoryAllocator(ctx, experimental.MemoryAllocatorFunc(mmapMemory))
}

type mapped struct {
	buf  []byte
	heap bool
}

func mmapMemory(_, max uint64) experimental.LinearMemory {
	if max == 0 || max > 1<<32 {
		max = 1 << 32
	}
	buf, err := syscall.Mmap(-1, 0, int(max), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS|syscall.MAP_NORESERVE)
	if err != nil { // no address space left: a Go slice, so the instance still starts
		return &mapped{buf: make([]byte, max), heap: true}
	}
	return &mapped{buf: buf}
}

// Reallocate never moves the memory; nil (growth refused) past the mapping.
func (m *mapped) Reallocate(size uint64) []byte {
	if size > uint64(len(m.buf)) {
		return nil
	}
	return m.buf[:size:size]
}

func (m *mapped) Free() {
	if m.buf != nil && !m.heap {
		syscall.Munmap(m.buf)
		m.buf = nil
	}
}
