package memlimit

import (
	"testing"
	"testing/fstest"
)

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

func TestCgroup(t *testing.T) {
	cases := []struct {
		name string
		fs   fstest.MapFS
		want int64
	}{
		{"v2 unit with MemoryMax", fstest.MapFS{
			"proc/self/cgroup": file("0::/system.slice/rpengine.service\n"),
			"sys/fs/cgroup/system.slice/rpengine.service/memory.max": file("1073741824\n"),
			"sys/fs/cgroup/system.slice/memory.max":                  file("max\n"),
		}, 1 << 30},
		{"v2 parent smaller", fstest.MapFS{
			"proc/self/cgroup":             file("0::/a/b\n"),
			"sys/fs/cgroup/a/b/memory.max": file("max\n"),
			"sys/fs/cgroup/a/memory.max":   file("536870912\n"),
		}, 512 << 20},
		{"v2 container (cgroup namespace)", fstest.MapFS{
			"proc/self/cgroup":         file("0::/\n"),
			"sys/fs/cgroup/memory.max": file("268435456\n"),
		}, 256 << 20},
		{"v2 no limit", fstest.MapFS{
			"proc/self/cgroup":                    file("0::/user.slice\n"),
			"sys/fs/cgroup/user.slice/memory.max": file("max\n"),
		}, 0},
		{"v1 unlimited (this machine's kind)", fstest.MapFS{
			"proc/self/cgroup": file("5:devices:/\n4:memory:/process_api/x\n0::/\n"),
			"sys/fs/cgroup/memory/process_api/x/memory.limit_in_bytes": file("9223372036854771712\n"),
			"sys/fs/cgroup/memory/memory.limit_in_bytes":               file("9223372036854771712\n"),
		}, 0},
		{"v1 container: host path absent, its own limit at the root", fstest.MapFS{
			"proc/self/cgroup":                           file("9:cpuacct,memory:/docker/abc\n"),
			"sys/fs/cgroup/memory/memory.limit_in_bytes": file("805306368\n"),
		}, 768 << 20},
		{"no cgroup file", fstest.MapFS{}, 0},
		{"garbage", fstest.MapFS{
			"proc/self/cgroup":         file("0::/\n"),
			"sys/fs/cgroup/memory.max": file("lots\n"),
		}, 0},
	}
	for _, c := range cases {
		if got := Cgroup(c.fs); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

func TestDerive(t *testing.T) {
	if r := Derive(0, 256<<20); r.Limit != 0 || r.Why == "" {
		t.Errorf("no cgroup limit: %+v", r)
	}
	if r := Derive(1<<30, 256<<20); r.Limit != 966367641-256<<20 || r.Cgroup != 1<<30 { // 0.9 GiB, rounded down
		t.Errorf("1 GiB less a 256 MiB plugin: %+v", r)
	}
	if r := Derive(300<<20, 256<<20); r.Limit != 0 || r.Why == "" {
		t.Errorf("a cgroup barely larger than the plugin's cap: %+v", r)
	}
}

func TestApplyLeavesGOMEMLIMIT(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "1GiB")
	if r := Apply(Auto, 0); r.Limit != 0 || r.Why != "GOMEMLIMIT is set" {
		t.Errorf("%+v", r)
	}
}

// The configured limit wins; Auto is the cgroup's share inside a cgroup
// limit and Default outside one; None sets nothing.
func TestChoose(t *testing.T) {
	cases := []struct {
		name                       string
		configured, cgroup, plugin int64
		limit                      int64
		from                       string
	}{
		{"auto, no cgroup", Auto, 0, 256 << 20, Default, "default"},
		{"auto, cgroup 1 GiB", Auto, 1 << 30, 256 << 20, 966367641 - 256<<20, "cgroup"},
		{"auto, cgroup too small", Auto, 300 << 20, 256 << 20, 0, ""},
		{"configured, no cgroup", 300 << 20, 0, 256 << 20, 300 << 20, "config"},
		{"configured, cgroup", 100 << 20, 1 << 30, 256 << 20, 100 << 20, "config"},
		{"none", None, 1 << 30, 256 << 20, 0, ""},
	}
	for _, c := range cases {
		r := Choose(c.configured, c.cgroup, c.plugin)
		if r.Limit != c.limit || r.From != c.from || (r.Limit == 0) != (r.Why != "") {
			t.Errorf("%s: %+v, want limit %d from %q", c.name, r, c.limit, c.from)
		}
	}
}
