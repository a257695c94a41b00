package engine

import (
	"fmt"
	"regexp"
	"strings"
)

// customName is Placement's pattern for custom class and trait names.
var customName = regexp.MustCompile(`^CUSTOM_[A-Z0-9_]+$`)

// standardName is Placement's pattern for any class or trait name.
var standardName = regexp.MustCompile(`^[A-Z0-9_]+$`)

const maxNameLen = 255

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
	if len(name) > maxNameLen {
		return fmt.Errorf("%q is longer than %d characters", name, maxNameLen)
	}
	if !customName.MatchString(name) {
		return fmt.Errorf("%q does not match %s", name, customName)
	}
	return nil
}

// ValidTraitName reports why name cannot be a trait (standard or custom).
func ValidTraitName(name string) error {
	if len(name) > maxNameLen || !standardName.MatchString(name) {
		return fmt.Errorf("trait %q is not a valid Placement trait name", name)
	}
	return nil
}
