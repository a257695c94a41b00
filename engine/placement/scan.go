package placement

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// scanner reads a provider listing at byte speed. It checks the JSON as
// strictly as jsontext does (structure, numbers, strings: escapes, UTF-8,
// control characters) but keeps nothing of the members it skips: six
// links a provider, two thirds of the bytes, read token by token were
// most of an idle cycle's listing (BenchmarkDecodeProviders). It reads
// through a buffer one step at a time (a provider, a skipped value); a
// step cut by the buffer's end is read again once the buffer holds more.
type scanner struct {
	r        io.Reader
	buf      []byte
	pos, end int
	eof      bool
	strs     arena // the strings read (listscan.go)
}

// errShort is a step cut by the end of what was read so far.
var errShort = errors.New("short buffer")

// maxDepth is jsontext's limit on nesting.
const maxDepth = 10000

// The buffer starts small (most answers are) and doubles with each read
// up to readSize; one step larger than it doubles it again.
const readSize = 64 << 10

func newScanner(r io.Reader) *scanner {
	return &scanner{r: r, buf: make([]byte, 512)}
}

// step runs f from the current position until it needs no more bytes.
func (s *scanner) step(f func() error) error {
	for {
		start := s.pos
		err := f()
		if !errors.Is(err, errShort) {
			return err
		}
		s.pos = start
		if err := s.fill(); err != nil {
			return err
		}
	}
}

// fill keeps the unread bytes and reads more after them until the buffer
// is full, growing it when one step needs more than it holds. Full, so
// that an answer sent in small pieces does not have a step read again
// after every piece.
func (s *scanner) fill() error {
	if s.eof {
		return io.ErrUnexpectedEOF
	}
	n := copy(s.buf, s.buf[s.pos:s.end])
	s.pos, s.end = 0, n
	if s.end == len(s.buf) || len(s.buf) < readSize {
		s.buf = append(s.buf, make([]byte, len(s.buf))...)
	}
	m, err := io.ReadFull(s.r, s.buf[s.end:])
	s.end += m
	switch {
	case err == io.ErrUnexpectedEOF || err == io.EOF:
		s.eof = true
		if m == 0 {
			return io.ErrUnexpectedEOF
		}
		return nil
	}
	return err
}

// next skips whitespace and returns the next byte, not consumed.
func (s *scanner) next() (byte, error) {
	for s.pos < s.end {
		switch c := s.buf[s.pos]; c {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return c, nil
		}
	}
	return 0, errShort
}

// expect consumes the next byte, which must be c.
func (s *scanner) expect(c byte) error {
	got, err := s.next()
	if err != nil {
		return err
	}
	if got != c {
		return fmt.Errorf("malformed provider list: want %q, got %q", c, got)
	}
	s.pos++
	return nil
}

// more reads what follows a member or element: a comma (more follow) or
// the closing byte.
func (s *scanner) more(closing byte) (bool, error) {
	c, err := s.next()
	if err != nil {
		return false, err
	}
	switch c {
	case ',':
		s.pos++
		return true, nil
	case closing:
		s.pos++
		return false, nil
	}
	return false, fmt.Errorf("malformed provider list: want ',' or %q, got %q", closing, c)
}

// empty consumes closing if it comes next: an empty object or array.
func (s *scanner) empty(closing byte) (bool, error) {
	c, err := s.next()
	if err == nil && c == closing {
		s.pos++
		return true, nil
	}
	return false, err
}

// str consumes a string and returns it with its quotes, as sent, and
// whether it has escapes.
func (s *scanner) str() (raw []byte, escaped bool, err error) {
	if err := s.expect('"'); err != nil {
		return nil, false, err
	}
	end, escaped, err := stringEnd(s.buf[:s.end], s.pos)
	if err != nil {
		return nil, false, err
	}
	raw, s.pos = s.buf[s.pos-1:end], end
	return raw, escaped, nil
}

// stringEnd checks the string whose body starts at b[i] (after its
// opening quote) and returns the index after its closing quote, and
// whether it has escapes.
func stringEnd(b []byte, i int) (end int, escaped bool, err error) {
	for {
		i = plain(b, i)
		for i < len(b) && b[i] >= ' ' && b[i] < utf8.RuneSelf && b[i] != '"' && b[i] != '\\' {
			i++
		}
		if i >= len(b) {
			return 0, false, errShort
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, escaped, nil
		case c == '\\':
			n, err := escape(b[i:])
			if err != nil {
				return 0, false, err
			}
			i, escaped = i+n, true
		case c < ' ':
			return 0, false, fmt.Errorf("malformed provider list: control character %q in a string", c)
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				if !utf8.FullRune(b[i:]) {
					return 0, false, errShort
				}
				return 0, false, fmt.Errorf("malformed provider list: invalid UTF-8 in a string")
			}
			i += n
		}
	}
}

// plain skips, eight bytes at a time, the bytes from i that need no
// look in a string: ASCII, not a control character, quote or backslash.
// In a word that holds one, the lowest byte flagged is the first such
// byte (a borrow only flags bytes above it), so it stops right there.
func plain(b []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		quote, slash := x^(ones*'"'), x^(ones*'\\')
		special := ((x-ones*' ')&^x | (quote-ones)&^quote | (slash-ones)&^slash | x) & highs
		if special != 0 {
			return i + bits.TrailingZeros64(special)/8
		}
	}
	return i
}

// escape returns the length of the escape sequence b starts with; a
// surrogate must be the first of a valid pair, as jsontext requires.
func escape(b []byte) (int, error) {
	if len(b) < 2 {
		return 0, errShort
	}
	switch b[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2, nil
	case 'u':
	default:
		return 0, fmt.Errorf("malformed provider list: invalid escape %q in a string", b[:2])
	}
	r1, err := hex4(b[2:])
	if err != nil || !utf16.IsSurrogate(r1) {
		return 6, err
	}
	if len(b) > 6 && b[6] != '\\' || len(b) > 7 && b[7] != 'u' {
		return 0, fmt.Errorf("malformed provider list: unpaired surrogate in a string")
	}
	r2, err := hex4(b[min(len(b), 8):])
	if err != nil {
		return 0, err
	}
	if utf16.DecodeRune(r1, r2) == utf8.RuneError {
		return 0, fmt.Errorf("malformed provider list: invalid surrogate pair in a string")
	}
	return 12, nil
}

// hex4 reads the four hex digits of a \u escape.
func hex4(b []byte) (rune, error) {
	if len(b) < 4 {
		for _, c := range b {
			if !isHex(c) {
				return 0, fmt.Errorf("malformed provider list: invalid \\u escape in a string")
			}
		}
		return 0, errShort
	}
	var r rune
	for _, c := range b[:4] {
		if !isHex(c) {
			return 0, fmt.Errorf("malformed provider list: invalid \\u escape in a string")
		}
		r = r<<4 | rune(hexVal(c))
	}
	return r, nil
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func hexVal(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// number consumes a number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
// It must be followed by a byte (a number at the end of the bytes read may
// go on), which the caller checks.
func (s *scanner) number() error {
	b, i := s.buf[:s.end], s.pos
	digits := func() int {
		j := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		return i - j
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else if digits() == 0 && i < len(b) {
		return fmt.Errorf("malformed provider list: invalid number")
	}
	if i < len(b) && b[i] == '.' {
		if i++; digits() == 0 && i < len(b) {
			return fmt.Errorf("malformed provider list: invalid number")
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		if i++; i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 && i < len(b) {
			return fmt.Errorf("malformed provider list: invalid number")
		}
	}
	if i >= len(b) {
		return errShort
	}
	s.pos = i
	return nil
}

// literal consumes true, false or null.
func (s *scanner) literal(word string) error {
	if s.end-s.pos < len(word) {
		if !bytes.HasPrefix([]byte(word), s.buf[s.pos:s.end]) {
			return fmt.Errorf("malformed provider list: invalid literal")
		}
		return errShort
	}
	if string(s.buf[s.pos:s.pos+len(word)]) != word {
		return fmt.Errorf("malformed provider list: invalid literal")
	}
	s.pos += len(word)
	return nil
}

// skip consumes one value of any kind.
func (s *scanner) skip(depth int) error {
	c, err := s.next()
	if err != nil {
		return err
	}
	switch c {
	case '{', '[':
		return s.skipComposite(c, depth+1)
	case '"':
		_, _, err = s.str()
		return err
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	}
	if c == '-' || '0' <= c && c <= '9' {
		return s.number()
	}
	return fmt.Errorf("malformed provider list: invalid character %q at the start of a value", c)
}

// skipComposite consumes an object or an array.
func (s *scanner) skipComposite(open byte, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("malformed provider list: nested deeper than %d", maxDepth)
	}
	s.pos++
	closing := byte(']')
	if open == '{' {
		closing = '}'
	}
	if done, err := s.empty(closing); done || err != nil {
		return err
	}
	for {
		if open == '{' {
			if _, _, err := s.str(); err != nil {
				return err
			}
			if err := s.expect(':'); err != nil {
				return err
			}
		}
		if err := s.skip(depth); err != nil {
			return err
		}
		if again, err := s.more(closing); !again || err != nil {
			return err
		}
	}
}

// name returns a member's name; escaped names are unquoted (a copy).
func (s *scanner) name() ([]byte, error) {
	raw, escaped, err := s.str()
	if err != nil {
		return nil, err
	}
	if err := s.expect(':'); err != nil {
		return nil, err
	}
	if escaped {
		return jsontext.AppendUnquote(nil, raw)
	}
	return raw[1 : len(raw)-1], nil
}

// text reads a string member (null leaves it unset).
func (s *scanner) text() (v string, null bool, err error) {
	c, err := s.next()
	switch {
	case err != nil:
		return "", false, err
	case c == 'n':
		return "", true, s.literal("null")
	case c != '"':
		return "", false, fmt.Errorf("want a string, got %q", c)
	}
	raw, escaped, err := s.str()
	if err != nil {
		return "", false, err
	}
	if !escaped {
		return s.strs.string(raw[1 : len(raw)-1]), false, nil
	}
	b, err := jsontext.AppendUnquote(nil, raw)
	return string(b), false, err
}

// listing calls each for every provider of a listing; names are read
// only when wanted.
func (s *scanner) listing(names bool, each func(Provider) error) error {
	var done, found bool
	err := s.step(func() (err error) {
		if err = s.expect('{'); err == nil {
			done, err = s.empty('}')
		}
		return err
	})
	for err == nil && !done {
		var list bool
		err = s.step(func() error {
			key, err := s.name()
			list = string(key) == "resource_providers"
			return err
		})
		switch {
		case err == nil && list:
			found = true
			err = s.providers(names, each)
		case err == nil:
			err = s.step(func() error { return s.skip(1) })
		}
		if err == nil {
			err = s.step(func() (err error) {
				more, err := s.more('}')
				done = !more
				return err
			})
		}
	}
	if err != nil {
		return err
	}
	return required("resource_providers", !found)
}

// providers reads the array of providers.
func (s *scanner) providers(names bool, each func(Provider) error) error {
	var done bool
	err := s.step(func() (err error) {
		if err = s.expect('['); err == nil {
			done, err = s.empty(']')
		}
		return err
	})
	gens := newGenerations()
	gens.strs = &s.strs
	for err == nil && !done {
		var p Provider
		err = s.step(func() (err error) {
			if p, err = s.provider(names, gens); err == nil {
				var more bool
				more, err = s.more(']')
				done = !more
			}
			return err
		})
		if err == nil {
			err = each(p)
		}
	}
	return err
}

// provider reads one provider: uuid, generation and, if names, its name
// and parent; the rest (links, root) is checked and skipped.
func (s *scanner) provider(names bool, gens *generations) (p Provider, err error) {
	if err := s.expect('{'); err != nil {
		return p, err
	}
	done, err := s.empty('}')
	for err == nil && !done {
		var name []byte
		if name, err = s.name(); err != nil {
			return p, err
		}
		var key string
		if key, err = s.member(&p, name, names, gens); err == errShort {
			return p, err // read again: no message to build
		} else if err != nil {
			return p, fmt.Errorf("provider %q: %s: %w", p.UUID, key, err)
		}
		var more bool
		more, err = s.more('}')
		done = !more
	}
	if err == nil && (p.UUID == "" || p.Generation == "") {
		err = fmt.Errorf("provider without uuid or generation in the listing")
	}
	return p, err
}

// member reads the value of one member of a provider; key names it for
// errors.
func (s *scanner) member(p *Provider, name []byte, names bool, gens *generations) (key string, err error) {
	switch string(name) {
	case "uuid":
		v, null, err := s.text()
		if !null && err == nil {
			p.UUID = v
		}
		return "uuid", err
	case "name", "parent_provider_uuid":
		key = "name"
		if name[0] == 'p' {
			key = "parent_provider_uuid"
		}
		if !names {
			return key, s.skipMember(3)
		}
		v, null, err := s.text()
		switch {
		case null || err != nil:
		case key == "name":
			p.Name = v
		default:
			p.ParentUUID = &v
		}
		return key, err
	case "generation":
		if _, err := s.next(); err != nil {
			return "generation", err
		}
		start := s.pos
		if err := s.skip(3); err != nil {
			return "generation", err
		}
		if v := s.buf[start:s.pos]; string(v) != "null" {
			p.Generation = gens.of(v)
			return "generation", nil
		}
		return "generation", fmt.Errorf("placement: missing generation")
	}
	return "member", s.skipMember(3)
}
