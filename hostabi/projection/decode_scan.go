package projection

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// maxDepth is encoding/json's nesting limit; deeper documents are invalid.
const maxDepth = 10000

// scanner walks a JSON document once, validating it (RFC 8259, as
// encoding/json reads it: invalid UTF-8 inside strings is accepted).
type scanner struct {
	doc []byte
	pos int
	w   *wireWriter
	lim Limits
}

type syntaxError struct {
	msg string
	pos int
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("document is not valid JSON: %s at offset %d", e.msg, e.pos)
}

func (s *scanner) fail(msg string) error { return &syntaxError{msg, s.pos} }

func (s *scanner) unexpected() error {
	if s.pos >= len(s.doc) {
		return s.fail("unexpected end")
	}
	return s.fail(fmt.Sprintf("unexpected %q", s.doc[s.pos]))
}

// peek returns the byte at pos, or 0 at the end.
func (s *scanner) peek() byte {
	if s.pos < len(s.doc) {
		return s.doc[s.pos]
	}
	return 0
}

func (s *scanner) ws() {
	for s.pos < len(s.doc) {
		switch s.doc[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// end checks that only whitespace follows the top-level value.
func (s *scanner) end() error {
	s.ws()
	if s.pos != len(s.doc) {
		return s.unexpected()
	}
	return nil
}

// members calls fn for each member of the object at pos (at nesting
// depth), with pos at the member's value; fn must consume the value.
func (s *scanner) members(depth int, fn func(key []byte) error) error {
	if depth >= maxDepth {
		return s.fail("nesting too deep")
	}
	s.pos++ // {
	s.ws()
	if s.peek() == '}' {
		s.pos++
		return nil
	}
	for {
		if s.peek() != '"' {
			return s.unexpected()
		}
		start := s.pos
		key, simple, err := s.str()
		if err != nil {
			return err
		}
		if !simple {
			var k string
			if json.Unmarshal(s.doc[start:s.pos], &k) != nil {
				return s.fail("bad string")
			}
			key = []byte(k)
		}
		s.ws()
		if s.peek() != ':' {
			return s.unexpected()
		}
		s.pos++
		s.ws()
		if err := fn(key); err != nil {
			return err
		}
		if done, err := s.after('}'); done || err != nil {
			return err
		}
	}
}

// elements calls fn for each element of the array at pos, with pos at
// the element; fn must consume it.
func (s *scanner) elements(depth int, fn func() error) error {
	if depth >= maxDepth {
		return s.fail("nesting too deep")
	}
	s.pos++ // [
	s.ws()
	if s.peek() == ']' {
		s.pos++
		return nil
	}
	for {
		if err := fn(); err != nil {
			return err
		}
		if done, err := s.after(']'); done || err != nil {
			return err
		}
	}
}

// after steps past what follows a member or an element: a comma (and
// the space after it), or the closing byte, when done is true.
func (s *scanner) after(closing byte) (done bool, err error) {
	s.ws()
	switch s.peek() {
	case ',':
		s.pos++
		s.ws()
		return false, nil
	case closing:
		s.pos++
		return true, nil
	}
	return false, s.unexpected()
}

// str consumes the string at pos and returns its raw content; simple
// means plain ASCII without escapes, usable as is.
func (s *scanner) str() (raw []byte, simple bool, err error) {
	start := s.pos + 1
	i, simple := start, true
	for {
		if i >= len(s.doc) {
			s.pos = i
			return nil, false, s.fail("unterminated string")
		}
		c := s.doc[i]
		switch {
		case c == '"':
			s.pos = i + 1
			return s.doc[start:i], simple, nil
		case c < 0x20:
			s.pos = i
			return nil, false, s.fail("control character in string")
		case c == '\\':
			simple = false
			n, ok := escapeLen(s.doc[i:])
			if !ok {
				s.pos = i
				return nil, false, s.fail("bad escape")
			}
			i += n
		case c >= utf8.RuneSelf:
			simple = false
			i++
		default:
			i++
		}
	}
}

// escapeLen is the length of the escape sequence at the start of b.
func escapeLen(b []byte) (int, bool) {
	if len(b) < 2 {
		return 0, false
	}
	switch b[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2, true
	case 'u':
		if len(b) < 6 {
			return 0, false
		}
		for _, h := range b[2:6] {
			if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
				return 0, false
			}
		}
		return 6, true
	}
	return 0, false
}

// skip validates and consumes the value at pos.
func (s *scanner) skip(depth int) error {
	switch c := s.peek(); {
	case c == '"':
		_, _, err := s.str()
		return err
	case c == '{':
		return s.members(depth, func([]byte) error { return s.skip(depth + 1) })
	case c == '[':
		return s.elements(depth, func() error { return s.skip(depth + 1) })
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	}
	return s.unexpected()
}

func (s *scanner) literal(word string) error {
	if len(s.doc)-s.pos < len(word) || string(s.doc[s.pos:s.pos+len(word)]) != word {
		return s.fail("bad literal")
	}
	s.pos += len(word)
	return nil
}

// number consumes -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() error {
	if s.peek() == '-' {
		s.pos++
	}
	switch c := s.peek(); {
	case c == '0':
		s.pos++
	case c >= '1' && c <= '9':
		s.digits()
	default:
		return s.unexpected()
	}
	if s.peek() == '.' {
		s.pos++
		if !s.digits() {
			return s.unexpected()
		}
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		s.pos++
		if c := s.peek(); c == '+' || c == '-' {
			s.pos++
		}
		if !s.digits() {
			return s.unexpected()
		}
	}
	return nil
}

func (s *scanner) digits() bool {
	start := s.pos
	for s.pos < len(s.doc) && s.doc[s.pos] >= '0' && s.doc[s.pos] <= '9' {
		s.pos++
	}
	return s.pos > start
}

func (s *scanner) kindName() string {
	switch s.peek() {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "number"
}
