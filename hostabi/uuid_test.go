package hostabi_test

import (
	"testing"

	"github.com/rpengine/rpengine/hostabi"
)

func TestValidUUID(t *testing.T) {
	for s, want := range map[string]bool{
		"1be26c0b-03f2-4d2e-ae87-c02d7f33c123":  true,
		"1BE26C0B-03F2-4D2E-AE87-C02D7F33C123":  true,
		"":                                      false,
		"1be26c0b03f24d2eae87c02d7f33c123":      false, // no dashes
		"1be26c0b-03f2-4d2e-ae87-c02d7f33c12":   false, // short
		"1be26c0b-03f2-4d2e-ae87-c02d7f33c1234": false, // long
		"1be26c0b-03f2-4d2e-ae87_c02d7f33c123":  false, // dash misplaced
		"1be26c0g-03f2-4d2e-ae87-c02d7f33c123":  false, // not hex
		"1be26c0b-03f2-4d2e-ae87-c02d7f33c1é":   false, // multibyte
		"../../../../etc/passwd/aaaaaaaaaaaaa":  false,
	} {
		if got := hostabi.ValidUUID(s); got != want {
			t.Errorf("ValidUUID(%q) = %v, want %v", s, got, want)
		}
	}
}
