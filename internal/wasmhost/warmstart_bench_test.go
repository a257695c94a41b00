package wasmhost_test

import (
	"context"
	"crypto/sha256"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
)

// BenchmarkWarmCompileVMware is make bench's row for the plugin host's
// warm start: the CPU of compiling vmware.wasm (27 MB) with a warm
// compilation cache, as newSandbox does, against reading and checking its
// cache entries (what a start that trusted its cache would cost). wazero
// 1.12 decodes and validates every function before it asks its cache
// (engine/PROFILE-100k.md, section 12).
func BenchmarkWarmCompileVMware(b *testing.B) {
	dir := os.Getenv("RPENGINE_PLUGIN_DIR")
	wasm, err := os.ReadFile(filepath.Join(dir, "vmware.wasm"))
	if dir == "" || err != nil {
		b.Skip("needs RPENGINE_PLUGIN_DIR holding vmware.wasm (make plugins)")
	}
	cacheDir := b.TempDir()
	compile := func() {
		ctx := context.Background()
		cache, err := wazero.NewCompilationCacheWithDir(cacheDir)
		if err != nil {
			b.Fatal(err)
		}
		rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().WithCompilationCache(cache))
		if _, err := rt.CompileModule(ctx, wasm); err != nil {
			b.Fatal(err)
		}
		_ = rt.Close(ctx)
		_ = cache.Close(ctx)
	}
	compile() // fills the cache
	var compileCPU, readCPU time.Duration
	n := 0
	for b.Loop() {
		t := processCPU()
		compile()
		compileCPU += processCPU() - t
		t = processCPU()
		sha256.Sum256(wasm)
		readCache(b, cacheDir)
		readCPU += processCPU() - t
		n++
	}
	b.ReportMetric(float64(compileCPU.Microseconds())/1e3/float64(n), "compile-cpu-ms/start")
	b.ReportMetric(float64(readCPU.Microseconds())/1e3/float64(n), "trusted-cpu-ms/start")
}

// readCache streams every file of the cache through a checksum, as
// wazero's cache reads its entry (not into one buffer: faulting in a
// buffer of the entry's size cost more than the read).
func readCache(b *testing.B, dir string) {
	buf := make([]byte, 1<<20)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.CopyBuffer(crc32.New(crc32.MakeTable(crc32.Castagnoli)), f, buf)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
