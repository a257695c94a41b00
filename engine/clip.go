package engine

import (
	"fmt"
	"unicode/utf8"
)

// clipLen bounds a value from outside quoted in an error: a plugin's
// 100 MiB class name must cost the report a few dozen bytes, not 100 MiB.
const clipLen = 64

// Clip returns s, or its first clipLen bytes (whole characters) and its
// length when it is longer.
func Clip(s string) string {
	if len(s) <= clipLen {
		return s
	}
	cut := clipLen
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s…(%d bytes)", s[:cut], len(s))
}

// clipAll clips the first few of ss, and drops the rest: the count is
// quoted beside them.
func clipAll(ss []string) []string {
	out := make([]string, 0, min(len(ss), 5))
	for _, s := range ss[:min(len(ss), 5)] {
		out = append(out, Clip(s))
	}
	return out
}
