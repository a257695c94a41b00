package placement

import (
	"errors"
	"fmt"
	"unsafe"
)

// The listing's hot path: an idle cycle reads a provider's uuid and
// generation and skips six links, a root uuid and a parent. skipped is
// those members checked in one loop over the buffer instead of a call per
// token (skip), and arena keeps the strings read in a few blocks instead
// of one allocation each (BenchmarkIdleListing).

// errDeep sends a value nested deeper than skipped tracks back to skip.
var errDeep = errors.New("nested too deep for the flat skip")

// States of skipped: what may come next.
const (
	wantValue        = iota
	wantValueOrClose // after '['
	wantName         // after ',' in an object
	wantNameOrClose  // after '{'
	wantColon
	wantMore // after a value: ',' or the closing byte
)

// skipped consumes one value of any kind, checked as skip checks it
// (skip runs instead on a value nested deeper than 64 levels, which a
// listing never has). stack's bit k says whether level k+1 is an object.
func (s *scanner) skipped() error {
	b, i := s.buf[:s.end], s.pos
	var stack uint64
	depth, state := 0, wantValue
	for {
		for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
			i++
		}
		if state == wantMore && depth == 0 {
			s.pos = i
			return nil
		}
		if i >= len(b) {
			return errShort
		}
		c, err := b[i], error(nil)
		switch state {
		case wantMore:
			i, state, err = closeOrNext(c, i, stack&1 != 0)
			if c != ',' && err == nil {
				depth, stack = depth-1, stack>>1
			}
		case wantColon:
			if c != ':' {
				return fmt.Errorf("malformed provider list: want ':', got %q", c)
			}
			i, state = i+1, wantValue
		case wantName, wantNameOrClose:
			switch {
			case c == '}' && state == wantNameOrClose:
				i, state, depth, stack = i+1, wantMore, depth-1, stack>>1
			case c != '"':
				return fmt.Errorf("malformed provider list: want '\"', got %q", c)
			default:
				i, _, err = stringEnd(b, i+1)
				state = wantColon
			}
		case wantValueOrClose:
			if c == ']' {
				i, state, depth, stack = i+1, wantMore, depth-1, stack>>1
				continue
			}
			fallthrough
		default:
			if (c == '{' || c == '[') && depth == 64 {
				return errDeep
			}
			i, state, err = s.value(c, i)
			if c == '{' || c == '[' {
				depth, stack = depth+1, stack<<1|uint64(b2i(c == '{'))
			}
		}
		if err != nil {
			return err
		}
	}
}

// closeOrNext reads what follows a value inside an object (obj) or an
// array: a comma, or the byte that closes it.
func closeOrNext(c byte, i int, obj bool) (int, int, error) {
	switch {
	case c == ',' && obj:
		return i + 1, wantName, nil
	case c == ',':
		return i + 1, wantValue, nil
	case c == '}' && obj, c == ']' && !obj:
		return i + 1, wantMore, nil
	}
	closing := byte(']')
	if obj {
		closing = '}'
	}
	return i, 0, fmt.Errorf("malformed provider list: want ',' or %q, got %q", closing, c)
}

// value reads the start of a value at b[i]: a whole scalar, or the
// opening byte of an object or array.
func (s *scanner) value(c byte, i int) (int, int, error) {
	switch c {
	case '{':
		return i + 1, wantNameOrClose, nil
	case '[':
		return i + 1, wantValueOrClose, nil
	case '"':
		end, _, err := stringEnd(s.buf[:s.end], i+1)
		return end, wantMore, err
	}
	s.pos = i
	var err error
	switch {
	case c == 't':
		err = s.literal("true")
	case c == 'f':
		err = s.literal("false")
	case c == 'n':
		err = s.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		err = s.number()
	default:
		err = fmt.Errorf("malformed provider list: invalid character %q at the start of a value", c)
	}
	return s.pos, wantMore, err
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// skipMember consumes a member's value the engine does not read.
func (s *scanner) skipMember(depth int) error {
	start := s.pos
	err := s.skipped()
	if err == errDeep {
		s.pos = start
		return s.skip(depth)
	}
	return err
}

// arena hands out strings copied into blocks of arenaBlock bytes: one
// allocation a block instead of one a string. A string kept keeps its
// block alive, so a block is small: at worst 16 KiB held for one uuid
// the engine keeps longer than the listing.
type arena struct{ block []byte }

const arenaBlock = 16 << 10

func (a *arena) string(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > arenaBlock/4 {
		return string(b)
	}
	if cap(a.block)-len(a.block) < len(b) {
		a.block = make([]byte, 0, arenaBlock)
	}
	n := len(a.block)
	a.block = append(a.block, b...)
	// The bytes are never written again: the block only grows.
	return unsafe.String(&a.block[n], len(b))
}
