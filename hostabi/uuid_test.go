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

// oldValidUUID is ValidUUID as first written, a branch per byte: the
// oracle the table-driven check is held to.
func oldValidUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'):
			return false
		}
	}
	return true
}

// Every byte value at every place of a uuid, of either case, and every
// length around 36, give what the branch-per-byte check gave.
func TestValidUUIDAgreesWithByteByByteCheck(t *testing.T) {
	for _, base := range []string{"1be26c0b-03f2-4d2e-ae87-c02d7f33c123", "1BE26C0B-03F2-4D2E-AE87-C02D7F33C123", "00000000-0000-0000-0000-000000000000"} {
		for i := range len(base) {
			for c := range 256 {
				s := base[:i] + string([]byte{byte(c)}) + base[i+1:]
				if got, want := hostabi.ValidUUID(s), oldValidUUID(s); got != want {
					t.Fatalf("ValidUUID(%q) = %v, want %v", s, got, want)
				}
			}
		}
		for n := range 40 {
			s := (base + base)[:n]
			if got, want := hostabi.ValidUUID(s), oldValidUUID(s); got != want {
				t.Fatalf("ValidUUID(%q) = %v, want %v", s, got, want)
			}
		}
	}
}

func FuzzValidUUID(f *testing.F) {
	f.Add("1be26c0b-03f2-4d2e-ae87-c02d7f33c123")
	f.Add("1be26c0b-03f2-4d2e-ae87-c02d7f33c1é")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := hostabi.ValidUUID(s), oldValidUUID(s); got != want {
			t.Fatalf("ValidUUID(%q) = %v, want %v", s, got, want)
		}
	})
}

func BenchmarkValidUUID(b *testing.B) {
	s := "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"
	for b.Loop() {
		if !hostabi.ValidUUID(s) {
			b.Fatal(s)
		}
	}
}
