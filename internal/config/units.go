package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Duration is a Go duration string in TOML ("30s", "5m").
type Duration time.Duration

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("bad duration %q (want e.g. \"30s\" or \"5m\")", b)
	}
	*d = Duration(v)
	return nil
}

// D is the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// Size is a byte count in TOML: a string with a unit ("256MiB", "1GiB",
// "512KiB") or a plain number of bytes.
type Size uint64

var units = []struct {
	suffix string
	mult   uint64
}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}

// UnmarshalText parses a size with or without a unit.
func (s *Size) UnmarshalText(b []byte) error {
	str := strings.TrimSpace(string(b))
	for _, u := range units {
		if num, ok := strings.CutSuffix(str, u.suffix); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(num), 10, 64)
			if err != nil {
				break
			}
			*s = Size(n * u.mult)
			return nil
		}
	}
	n, err := strconv.ParseUint(str, 10, 64)
	if err != nil {
		return fmt.Errorf("bad size %q (want e.g. \"256MiB\" or \"1GiB\")", b)
	}
	*s = Size(n)
	return nil
}
