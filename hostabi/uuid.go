package hostabi

// ValidUUID says whether s is a uuid as Node.UUID must be: 36 characters,
// hex digits of either case in groups of 8-4-4-4-12 joined by dashes. The
// engine quarantines a node whose uuid fails it; plugins use it to refuse
// an id before asking a service about it. It is the one uuid check.
func ValidUUID(s string) bool {
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
