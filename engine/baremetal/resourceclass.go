package baremetal

import (
	"fmt"
	"strings"
)

// Placement's name patterns, checked by hand: a regexp here was a tenth of
// an idle cycle's CPU at 10,000 nodes.
const (
	customPattern = `^CUSTOM_[A-Z0-9_]+$`
	namePattern   = `^[A-Z0-9_]+$`
)

// upperName reports whether s matches namePattern.
func upperName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// MaxNameLen is Placement's limit on class and trait names.
const MaxNameLen = 255

// NormalizeResourceClass ports os-resource-classes' normalize_name byte
// for byte: runs of characters outside ASCII [0-9A-Za-z] become one "_",
// then ASCII upper-case, then the CUSTOM_ prefix (always added, as nova
// does). Non-ASCII letters are replaced before upper-casing (nova bug
// 1762789: "ß".upper() is "SS").
func NormalizeResourceClass(rc string) string {
	var b strings.Builder
	b.WriteString("CUSTOM_")
	under := false
	for i := 0; i < len(rc); i++ {
		c := rc[i]
		switch {
		case c >= '0' && c <= '9', c >= 'A' && c <= 'Z':
			b.WriteByte(c)
			under = false
		case c >= 'a' && c <= 'z':
			b.WriteByte(c - 'a' + 'A')
			under = false
		case !under:
			// Python's re works on code points; a multi-byte rune is one
			// run of non-matching bytes here too, so the result agrees.
			b.WriteByte('_')
			under = true
		}
	}
	return b.String()
}

// ValidCustomName reports why name cannot be a custom class or trait.
func ValidCustomName(name string) error {
	if len(name) > MaxNameLen {
		return fmt.Errorf("%q... is longer than %d characters (%d)", name[:MaxNameLen], MaxNameLen, len(name))
	}
	rest, ok := strings.CutPrefix(name, "CUSTOM_")
	if !ok || !upperName(rest) {
		return fmt.Errorf("%q does not match %s", name, customPattern)
	}
	return nil
}

// ValidTraitName reports why name cannot be a trait (standard or custom).
func ValidTraitName(name string) error {
	// "CUSTOM_" alone fits the pattern, but Placement refuses to create it.
	if len(name) > MaxNameLen || !upperName(name) || name == "CUSTOM_" {
		return fmt.Errorf("trait %q is not a valid Placement trait name", name)
	}
	return nil
}
