package wasmhost

import "fmt"

// syntax checks the JSON grammar of an answer as it streams, byte by
// byte, before the guard leaves anything out. The decoder behind the
// guard sees only what is passed on, so without this a malformed value
// inside a string or number cut at a limit, or inside entries skipped
// over one, would be accepted unread. It keeps a container stack of at
// most maxSyntaxDepth levels and no other memory.
type syntax struct {
	st    synState
	stack uint64 // bit d set: the container at depth d+1 is an object
	depth int
	esc   bool
	hex   int    // hex digits of a \u escape still to come
	lit   string // the rest of a literal being read: "rue" of true
	key   bool   // the string being read is an object's key
}

type synState uint8

const (
	synValue      synState = iota // a value is due
	synValueOrEnd                 // after '[': a value or ']'
	synKeyOrEnd                   // after '{': a key or '}'
	synKey                        // after ',' in an object: a key
	synColon                      // after a key
	synAfter                      // after a value: ',', a close, or the end
	synString
	synLiteral
	synMinus // number states, named by what was read last
	synZero
	synInt
	synDot
	synFrac
	synE
	synESign
	synExp
	synDone // the top-level value has ended
)

// maxSyntaxDepth bounds the checker's stack: far deeper than any answer
// needs (maxAnswerDepth), for entries the guard skips unread.
const maxSyntaxDepth = 64

// scan checks b, and returns how many of its bytes are good and what is
// wrong with the next one, if anything.
func (s *syntax) scan(b []byte) (int, error) {
	for i := 0; i < len(b); i++ {
		if s.st == synString && !s.esc && s.hex == 0 { // most of an answer
			for i < len(b) && b[i] >= 0x20 && b[i] != '"' && b[i] != '\\' {
				i++
			}
			if i == len(b) {
				break
			}
		}
		if err := s.step(b[i]); err != nil {
			return i, err
		}
	}
	return len(b), nil
}

func (s *syntax) step(c byte) error {
	if s.st >= synMinus && s.st <= synExp {
		if s.number(c) {
			return nil
		}
		if s.st == synMinus || s.st == synDot || s.st == synE || s.st == synESign {
			return fmt.Errorf("a number ends with %q", c)
		}
		s.st = synAfter
	}
	switch s.st {
	case synString:
		return s.string(c)
	case synLiteral:
		if s.lit == "" || c != s.lit[0] {
			return fmt.Errorf("invalid literal at %q", c)
		}
		if s.lit = s.lit[1:]; s.lit == "" {
			s.st = synAfter
		}
		return nil
	}
	if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
		return nil
	}
	return s.structural(c)
}

func (s *syntax) structural(c byte) error {
	switch s.st {
	case synValue, synValueOrEnd:
		if c == ']' && s.st == synValueOrEnd {
			return s.close(c)
		}
		return s.value(c)
	case synKeyOrEnd, synKey:
		if c == '}' && s.st == synKeyOrEnd {
			return s.close(c)
		}
		if c != '"' {
			return fmt.Errorf("%q where an object's key belongs", c)
		}
		s.st, s.key = synString, true
		return nil
	case synColon:
		if c != ':' {
			return fmt.Errorf("%q where ':' belongs", c)
		}
		s.st = synValue
		return nil
	case synAfter:
		return s.after(c)
	}
	return fmt.Errorf("%q after the answer's end", c)
}

// value starts a value.
func (s *syntax) value(c byte) error {
	switch {
	case c == '{' || c == '[':
		if s.depth == maxSyntaxDepth {
			return fmt.Errorf("nested deeper than %d levels", maxSyntaxDepth)
		}
		s.stack &^= 1 << s.depth
		s.st = synValueOrEnd
		if c == '{' {
			s.stack |= 1 << s.depth
			s.st = synKeyOrEnd
		}
		s.depth++
	case c == '"':
		s.st, s.key = synString, false
	case c == '-':
		s.st = synMinus
	case c == '0':
		s.st = synZero
	case c >= '1' && c <= '9':
		s.st = synInt
	case c == 't':
		s.st, s.lit = synLiteral, "rue"
	case c == 'f':
		s.st, s.lit = synLiteral, "alse"
	case c == 'n':
		s.st, s.lit = synLiteral, "ull"
	default:
		return fmt.Errorf("%q where a value belongs", c)
	}
	return nil
}

// after reads what may follow a value.
func (s *syntax) after(c byte) error {
	if s.depth == 0 {
		return fmt.Errorf("%q after the answer's end", c)
	}
	inObject := s.stack&(1<<(s.depth-1)) != 0
	switch {
	case c == ',' && inObject:
		s.st = synKey
	case c == ',':
		s.st = synValue
	case c == '}' && inObject, c == ']' && !inObject:
		return s.close(c)
	default:
		return fmt.Errorf("%q after a value", c)
	}
	return nil
}

func (s *syntax) close(c byte) error {
	if s.depth == 0 {
		return fmt.Errorf("%q closes nothing", c)
	}
	s.depth--
	s.st = synAfter
	if s.depth == 0 {
		s.st = synDone
	}
	return nil
}

func (s *syntax) string(c byte) error {
	switch {
	case s.hex > 0:
		if !isHex(c) {
			return fmt.Errorf("a \\u escape has %q where a hex digit belongs", c)
		}
		s.hex--
	case s.esc:
		s.esc = false
		switch c {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		case 'u':
			s.hex = 4
		default:
			return fmt.Errorf("the invalid escape \\%s", Printable(string(c)))
		}
	case c == '\\':
		s.esc = true
	case c == '"':
		s.st = synAfter
		if s.key {
			s.st = synColon
		}
	case c < 0x20:
		return fmt.Errorf("a string holds the control character %q", c)
	}
	return nil
}

// number reads c as part of a number if it can be; false ends the number.
func (s *syntax) number(c byte) bool {
	digit := c >= '0' && c <= '9'
	var next synState
	switch {
	case s.st == synMinus && c == '0':
		next = synZero
	case s.st == synMinus && digit, s.st == synInt && digit:
		next = synInt
	case (s.st == synZero || s.st == synInt) && c == '.':
		next = synDot
	case (s.st == synDot || s.st == synFrac) && digit:
		next = synFrac
	case (s.st == synZero || s.st == synInt || s.st == synFrac) && (c == 'e' || c == 'E'):
		next = synE
	case s.st == synE && (c == '+' || c == '-'):
		next = synESign
	case (s.st == synE || s.st == synESign || s.st == synExp) && digit:
		next = synExp
	default:
		return false
	}
	s.st = next
	return true
}

// complete reports whether the answer's top-level value has ended.
func (s *syntax) complete() bool { return s.st == synDone }
