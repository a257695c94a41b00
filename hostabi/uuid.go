package hostabi

// ValidUUID says whether s is a uuid as Node.UUID must be: 36 characters,
// hex digits of either case in groups of 8-4-4-4-12 joined by dashes. The
// engine quarantines a node whose uuid fails it; plugins use it to refuse
// an id before asking a service about it. It is the one uuid check.
//
// Each byte's class is looked up and compared with the class its place
// wants, without a branch per byte: the engine checks every listed uuid
// twice a cycle (the node and its provider), 200,000 at 100,000 nodes.
func ValidUUID(s string) bool {
	if len(s) != len(uuidShape) {
		return false
	}
	s = s[:36]
	var a, b, c, d byte // four chains: the bytes are checked side by side
	for i := 0; i < 36; i += 4 {
		a |= uuidClass[s[i]] ^ uuidShape[i]
		b |= uuidClass[s[i+1]] ^ uuidShape[i+1]
		c |= uuidClass[s[i+2]] ^ uuidShape[i+2]
		d |= uuidClass[s[i+3]] ^ uuidShape[i+3]
	}
	return a|b|c|d == 0
}

// The classes of bytes in a uuid: a hex digit, a dash, anything else.
const (
	classHex   = 1
	classDash  = 2
	classOther = 4
)

// uuidShape is the class each of a uuid's 36 places wants.
var uuidShape = func() (shape [36]byte) {
	for i := range shape {
		shape[i] = classHex
		if i == 8 || i == 13 || i == 18 || i == 23 {
			shape[i] = classDash
		}
	}
	return shape
}()

// uuidClass is each byte's class.
var uuidClass = func() (class [256]byte) {
	for c := range class {
		switch {
		case c == '-':
			class[c] = classDash
		case c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F':
			class[c] = classHex
		default:
			class[c] = classOther
		}
	}
	return class
}()
