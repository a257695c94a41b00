// Package memlimit gives the engine's Go runtime a soft memory limit
// below its cgroup's hard one (a container's or a systemd unit's
// MemoryMax): near the limit the garbage collector works harder instead
// of letting the heap grow to twice the live set into the kernel's OOM
// killer. Without a cgroup limit it sets Default, or what the config
// says, so that a cold cycle's garbage does not double its peak RSS.
// It must never set a hard limit: a live set above the soft one makes the
// GC work harder (Go caps it at half the CPU), never fail.
package memlimit

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path"
	"runtime/debug"
	"strconv"
	"strings"
)

// Share is the part of the cgroup limit the engine and its plugin host
// may use together; the rest is slack for what Go does not count (the
// binary's pages, the kernel's buffers of the process).
const Share = 0.9

// Floor is the smallest limit set: below it the engine is better off
// with none.
const Floor = 64 << 20

// Default is the soft limit outside a cgroup with a memory limit: at
// 100,000 providers a cold cycle's live heap peaks near 80 MiB and, left
// to GOGC alone, its RSS near 200 MiB (engine/PROFILE-100k.md, "Cold-run
// RSS"); 160 MiB holds it there at a few percent more GC work.
const Default = 160 << 20

// Auto and None are the configured limits (engine.memory_limit) that are
// not a size: derived from the cgroup, else Default; or none at all.
const (
	Auto int64 = 0
	None int64 = -1
)

// Result says what Apply did, for the log.
type Result struct {
	Cgroup int64  // the cgroup's limit in bytes; 0 when none
	Limit  int64  // the soft limit set; 0 when none
	From   string // where Limit came from: "config", "cgroup" or "default"
	Why    string // why none was set
}

// Apply sets the soft limit configured (Auto, None or bytes), unless
// GOMEMLIMIT says otherwise. Auto derives it from the cgroup's, less
// plugin (the plugin's memory cap: its host is a child in the same
// cgroup), and is Default outside a cgroup limit.
func Apply(configured, plugin int64) Result {
	if os.Getenv("GOMEMLIMIT") != "" {
		return Result{Why: "GOMEMLIMIT is set"}
	}
	r := Choose(configured, Cgroup(os.DirFS("/")), plugin)
	if r.Limit > 0 {
		debug.SetMemoryLimit(r.Limit)
	}
	return r
}

// Choose is Apply's decision: the configured limit, else the cgroup's
// share (Derive), else Default.
func Choose(configured, cgroup, plugin int64) Result {
	switch {
	case configured > 0:
		return Result{Cgroup: cgroup, Limit: configured, From: "config"}
	case configured == None:
		return Result{Cgroup: cgroup, Why: "engine.memory_limit is \"none\""}
	case cgroup <= 0:
		return Result{Limit: Default, From: "default"}
	}
	return Derive(cgroup, plugin)
}

// Derive is the cgroup's arithmetic: Share of its limit less plugin.
func Derive(cgroup, plugin int64) Result {
	r := Result{Cgroup: cgroup}
	switch {
	case cgroup <= 0:
		r.Why = "no cgroup memory limit"
	case int64(Share*float64(cgroup))-plugin < Floor:
		r.Why = fmt.Sprintf("the cgroup limit (%d MiB) leaves less than %d MiB beside plugin.memory_limit", cgroup>>20, Floor>>20)
	default:
		r.Limit, r.From = int64(Share*float64(cgroup))-plugin, "cgroup"
	}
	return r
}

// Cgroup returns the memory limit of this process's cgroup in bytes,
// the smallest of its cgroup's and its ancestors' (cgroup v2 memory.max,
// v1 memory.limit_in_bytes), read from root ("/" in production); 0 when
// there is none or it cannot be read.
func Cgroup(root fs.FS) int64 {
	b, err := fs.ReadFile(root, "proc/self/cgroup")
	if err != nil {
		return 0
	}
	var limit int64
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// hierarchy-id:controllers:path; v2's is 0::path.
		f := strings.SplitN(sc.Text(), ":", 3)
		if len(f) != 3 || !strings.HasPrefix(f[2], "/") {
			continue
		}
		switch {
		case f[0] == "0" && f[1] == "":
			limit = smaller(limit, walk(root, "sys/fs/cgroup", f[2], "memory.max"))
		case hasController(f[1], "memory"):
			limit = smaller(limit, walk(root, "sys/fs/cgroup/memory", f[2], "memory.limit_in_bytes"))
		}
	}
	return limit
}

// walk reads file in dir and in each ancestor up to the mount's root (a
// container's own cgroup when the path is the host's), keeping the
// smallest limit.
func walk(root fs.FS, mount, dir, file string) int64 {
	var limit int64
	for p := path.Clean(dir); ; p = path.Dir(p) {
		limit = smaller(limit, read(root, path.Join(mount, p, file)))
		if p == "/" {
			return limit
		}
	}
}

// read parses one limit file: "max" (v2) or v1's near-2^63 mean none.
func read(root fs.FS, name string) int64 {
	b, err := fs.ReadFile(root, strings.TrimPrefix(name, "/"))
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n <= 0 || n >= 1<<62 {
		return 0
	}
	return n
}

func hasController(list, name string) bool {
	for c := range strings.SplitSeq(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// smaller is the smaller of two limits, 0 meaning none.
func smaller(a, b int64) int64 {
	if a == 0 || b != 0 && b < a {
		return b
	}
	return a
}
