package config

import (
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/memlimit"
)

func TestSoftLimit(t *testing.T) {
	for text, want := range map[string]SoftLimit{
		`"auto"`: SoftLimit(memlimit.Auto), `"none"`: SoftLimit(memlimit.None), `"512MiB"`: 512 << 20,
	} {
		var l SoftLimit
		if err := l.UnmarshalText([]byte(strings.Trim(text, `"`))); err != nil || l != want {
			t.Errorf("%s: %d %v, want %d", text, l, err, want)
		}
	}
	for _, bad := range []string{"lots", "1MiB", "", "-5"} {
		var l SoftLimit
		if err := l.UnmarshalText([]byte(bad)); err == nil || !strings.Contains(err.Error(), "memory limit") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
