package wasmhost

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/rpengine/rpengine/hostabi"
)

// Limits bound what one answer of a plugin may hold. They are checked on
// the answer's bytes as they stream in, before the JSON decoder buffers a
// value, so a hostile answer costs a bounded amount of memory. A limit on
// one field or one record marks that record invalid (the engine then
// quarantines the node) and the rest of its value is left out unread;
// only the limits on the whole answer refuse it. Zero values take the
// defaults.
type Limits struct {
	// MaxRecords caps the entries of a listing: nodes, instances, or
	// uuids in a deletion check. Over it, the answer is refused.
	MaxRecords int
	// MaxField caps the decoded bytes of any string (and the bytes of any
	// number) in an answer: `\u00e9` counts as the two bytes of é.
	MaxField int
	// MaxTraits caps the traits of one node, and its explicit resources.
	MaxTraits int
}

// Defaults fit the largest real fleets with room to spare: the largest
// Ironic deployments reported hold some 10,000 nodes per region; Ironic
// caps a node at 50 traits; Placement caps trait and resource class names
// at 255 characters, and Ironic's own string fields at 255 or less.
const (
	DefaultMaxRecords = 100_000
	DefaultMaxField   = 255
	DefaultMaxTraits  = 50

	// maxAnswerDepth is the deepest nesting any answer needs: answer,
	// nodes, node, resources, resource.
	maxAnswerDepth = 5
	// maxMembers caps the members of an answer's or a record's object.
	maxMembers = 64
	// maxMessage caps the answer's own strings (its error, its name),
	// which may say more than a field: an HTTP error with its URL.
	maxMessage = 4 << 10
)

func (l Limits) withDefaults() Limits {
	if l.MaxRecords <= 0 {
		l.MaxRecords = DefaultMaxRecords
	}
	if l.MaxField <= 0 {
		l.MaxField = DefaultMaxField
	}
	if l.MaxTraits <= 0 {
		l.MaxTraits = DefaultMaxTraits
	}
	return l
}

// limitError is an answer over a whole-answer limit; the first one found
// ends the read.
type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }

// guard passes an answer's bytes through while tracking just enough of
// the JSON grammar to enforce Limits: decoded string lengths, number
// lengths, UTF-8, entries per array or object by depth, and depth. Inside
// a listing's record, an overrun marks the record and the guard leaves out
// the rest of the value (or the rest of the container), so the decoder
// reads a shorter, still valid, document. syntax checks the grammar of
// every byte, the ones left out too. The names it quotes are cut short.
type guard struct {
	r     io.Reader
	syn   syntax // the whole answer's grammar, whatever is left out
	lim   Limits
	lists []string // the members decoded record by record
	off   int64
	err   error

	inStr, esc bool
	hex        int     // hex digits of a \u escape still to come
	cp         rune    // the \u escape's code point so far
	high       bool    // the last character was a \u high surrogate
	utf        [4]byte // a multi-byte UTF-8 sequence being read, held back
	un, uneed  int     // its bytes seen and due
	released   []byte  // held bytes to pass on before the byte just read
	tokLen     int     // decoded bytes of the current string, bytes of the current number
	inNum      bool    // in a number (or literal) outside strings
	numDigit   bool    // the number's last byte passed on is a digit
	drop       bool    // the rest of the current string or number is left out
	str        []byte  // the current string's first bytes, for names
	last       string  // the last string closed, a key if ':' follows

	// skip, when above 0, leaves out everything until the container
	// opened at that depth closes: entries over a per-record limit.
	skip int

	depth  int
	inList bool   // the array at depth 2 is a listing's
	list   string // that listing's key as the decoder names it, for marks
	items  [maxAnswerDepth + 2]int
	name   [maxAnswerDepth + 2]string // the member holding each container
	key    [maxAnswerDepth + 2]string // the current key of each object
	arr    [maxAnswerDepth + 2]bool   // whether each container is an array

	// marks holds the first fault of each record, until its listing's
	// decoder takes it (take): at most one entry per record read ahead.
	marks map[mark]*hostabi.Invalid
}

type mark struct {
	list string
	rec  int
}

const nameLen = 40

func newGuard(r io.Reader, lim Limits, lists ...string) *guard {
	return &guard{r: r, lim: lim.withDefaults(), lists: lists, marks: map[mark]*hostabi.Invalid{}}
}

func (g *guard) Read(p []byte) (int, error) {
	for g.err == nil {
		// The bytes of a UTF-8 sequence held back (utf8Byte) are passed on
		// when it ends: the read leaves them room at the front.
		held := g.un
		if held >= len(p) {
			return 0, io.ErrShortBuffer
		}
		n, err := g.r.Read(p[held:])
		good, bad := g.syn.scan(p[held : held+n])
		// w stays behind the byte being read: each byte read is passed,
		// replaced, left out or held, and only held bytes are released.
		w := 0
		for _, b := range p[held : held+good] {
			c, e := g.step(b)
			if e != nil {
				g.err = e
				return w, e // the decoder never sees the offending byte
			}
			g.off++
			if len(g.released) > 0 {
				w += copy(p[w:], g.released)
				g.released = g.released[:0]
			}
			if c >= 0 {
				p[w] = byte(c)
				w++
			}
		}
		if bad != nil {
			g.err = fmt.Errorf("at byte %d: %w", g.off, bad)
			return w, g.err
		}
		if err == io.EOF && !g.syn.complete() {
			g.err = fmt.Errorf("the answer ends at byte %d, inside a value", g.off)
			return w, g.err
		}
		if w > 0 || err != nil || n == 0 {
			return w, err
		}
	}
	return 0, g.err
}

// take returns (and forgets) the fault of record rec of listing list.
func (g *guard) take(list string, rec int) *hostabi.Invalid {
	m := mark{list, rec}
	bad := g.marks[m]
	if bad != nil {
		delete(g.marks, m)
	}
	return bad
}

// step reads one byte and returns the byte to pass on, or -1 for none.
func (g *guard) step(c byte) (int, error) {
	switch {
	case g.skip > 0:
		return g.skipping(c)
	case g.inStr:
		return g.strByte(c)
	}
	switch c {
	case '"':
		g.endNum()
		g.inStr, g.tokLen, g.str, g.drop, g.high, g.un = true, 0, g.str[:0], false, false, 0
		return int(c), nil
	case ' ', '\t', '\n', '\r':
		g.endNum()
		return int(c), nil
	case '[', '{':
		g.endNum()
		if g.depth++; g.depth > maxAnswerDepth {
			return 0, g.fail("nested deeper than %d levels", maxAnswerDepth)
		}
		d := g.depth
		g.items[d], g.name[d], g.key[d], g.arr[d] = 1, g.key[d-1], "", c == '['
		if d == 2 {
			g.list = ""
			if c == '[' {
				g.list = g.listKey(g.name[d])
			}
			g.inList = g.list != ""
		}
		return int(c), nil
	case ']', '}':
		g.endNum()
		if g.depth > 0 {
			g.depth--
		}
		return int(c), nil
	case ':':
		g.endNum()
		g.key[g.depth] = g.last
		return int(c), nil
	case ',':
		g.endNum()
		g.items[g.depth]++
		return g.checkItems(c)
	}
	return g.numByte(c)
}

// listKey returns the listing key matches as encoding/json matches it,
// "" for none: marks are filed under it, however the answer spells it
// ("NODES", "nodeſ").
func (g *guard) listKey(key string) string {
	for _, l := range g.lists {
		if strings.EqualFold(l, key) {
			return l
		}
	}
	return ""
}

// inRecord says whether the value being read belongs to a listing's
// record, where limits mark the record instead of refusing the answer.
func (g *guard) inRecord() bool { return g.inList && g.depth >= 2 }

func (g *guard) endNum() { g.inNum = false }

// numByte reads a byte of a number or literal. Over the limit in a
// record, the rest is left out; the number must still end in a digit
// ("1e" would not parse), so the first byte left out becomes a 0 when
// the last one passed on is not a digit.
func (g *guard) numByte(c byte) (int, error) {
	if !g.inNum {
		g.inNum, g.tokLen, g.drop = true, 0, false
	}
	if g.drop {
		return -1, nil
	}
	if g.tokLen++; g.tokLen <= g.lim.MaxField {
		g.numDigit = c >= '0' && c <= '9'
		return int(c), nil
	}
	if !g.inRecord() {
		return 0, g.fail("a number or literal%s longer than %d bytes (plugin.max_field_length)", g.where(), g.lim.MaxField)
	}
	g.mark(hostabi.InvalidFieldTooLong, "a number%s is longer than %d bytes (plugin.max_field_length)", g.where(), g.lim.MaxField)
	g.drop = true
	if !g.numDigit {
		return '0', nil
	}
	return -1, nil
}

// strByte reads a byte inside a string, counting the string's decoded
// length: an escape counts what it decodes to, as encoding/json decodes
// it (a lone surrogate becomes U+FFFD, and is not valid UTF-8).
func (g *guard) strByte(c byte) (int, error) {
	if g.un > 0 && c&0xc0 != 0x80 { // a UTF-8 sequence cut short
		n := g.un
		g.un = 0
		if err := g.broken(g.utf[:n]); err != nil {
			return 0, err
		}
	}
	if c == '"' && !g.esc && g.hex == 0 {
		g.endHigh()
		g.inStr, g.drop = false, false
		g.last = string(g.str)
		return int(c), nil
	}
	if len(g.str) < nameLen {
		g.str = append(g.str, c)
	}
	switch {
	case g.esc:
		g.esc = false
		if c == 'u' {
			g.hex, g.cp = 4, 0
			return g.pass(c), nil
		}
		g.endHigh()
		return g.char(c, 1)
	case g.hex > 0:
		g.cp = g.cp<<4 | rune(hexValue(c))
		if g.hex--; g.hex > 0 {
			return g.pass(c), nil
		}
		return g.char(c, g.escapedLen())
	case g.un > 0 || c >= 0x80:
		return g.utf8Byte(c)
	}
	if c == '\\' { // a \u after a high surrogate may be its low one
		g.esc = true
		return g.pass(c), nil
	}
	g.endHigh()
	return g.char(c, 1)
}

// utf8Byte reads a byte of a multi-byte UTF-8 sequence.
func (g *guard) utf8Byte(c byte) (int, error) {
	g.endHigh()
	if g.un == 0 {
		switch {
		case c >= 0xc2 && c <= 0xdf:
			g.uneed = 2
		case c >= 0xe0 && c <= 0xef:
			g.uneed = 3
		case c >= 0xf0 && c <= 0xf4:
			g.uneed = 4
		default: // the decoder makes it U+FFFD
			g.badUTF8()
			return g.char(c, utf8.RuneLen(utf8.RuneError))
		}
	}
	g.utf[g.un] = c
	if g.un++; g.un < g.uneed {
		return -1, nil // held back until the sequence ends
	}
	g.un = 0
	if !utf8.Valid(g.utf[:g.uneed]) {
		if err := g.broken(g.utf[:g.uneed-1]); err != nil {
			return 0, err
		}
		return g.char(c, utf8.RuneLen(utf8.RuneError))
	}
	r, err := g.char(c, g.uneed)
	if r >= 0 { // the sequence is passed on whole
		g.released = append(g.released, g.utf[:g.uneed-1]...)
	}
	return r, err
}

// broken releases the held bytes of a UTF-8 sequence that is not valid:
// the decoder makes each a U+FFFD, so each counts as one, and the string
// may be cut between them.
func (g *guard) broken(held []byte) error {
	g.badUTF8()
	for _, b := range held {
		r, err := g.char(b, utf8.RuneLen(utf8.RuneError))
		if err != nil {
			return err
		}
		if r >= 0 {
			g.released = append(g.released, b)
		}
	}
	return nil
}

func (g *guard) badUTF8() {
	if g.inRecord() {
		g.mark(hostabi.InvalidUTF8, "a string%s is not valid UTF-8", g.where())
	}
}

// endHigh ends a character after a \u high surrogate that is not the
// low one it needs: a lone surrogate.
func (g *guard) endHigh() {
	if g.high {
		g.high = false
		g.badUTF8()
	}
}

// escapedLen is the decoded length of the \u escape just read.
func (g *guard) escapedLen() int {
	const replacement = 3 // U+FFFD
	switch {
	case g.cp >= 0xd800 && g.cp < 0xdc00: // U+FFFD, unless a low one follows
		g.endHigh()
		g.high = true
		return replacement
	case g.cp >= 0xdc00 && g.cp < 0xe000:
		if g.high { // the pair is one 4-byte rune
			g.high = false
			return 4 - replacement
		}
		g.badUTF8()
		return replacement
	}
	g.endHigh()
	return utf8.RuneLen(g.cp)
}

// pass returns c unless the rest of the value is left out.
func (g *guard) pass(c byte) int {
	if g.drop {
		return -1
	}
	return int(c)
}

// char ends a character of size decoded bytes whose last byte is c.
func (g *guard) char(c byte, size int) (int, error) {
	if g.drop {
		return -1, nil
	}
	limit := g.lim.MaxField
	if !g.inRecord() && g.depth <= 1 {
		limit = maxMessage
	}
	if g.tokLen += size; g.tokLen <= limit {
		return int(c), nil
	}
	if !g.inRecord() {
		return 0, g.fail("a string%s longer than %d bytes (plugin.max_field_length), starting \"%s\"", g.where(), limit, Printable(string(g.str)))
	}
	g.mark(hostabi.InvalidFieldTooLong, "a string%s is longer than %d bytes (plugin.max_field_length), starting \"%s\"", g.where(), limit, Printable(string(g.str)))
	g.drop = true // the character is passed on whole: the string stays valid
	return int(c), nil
}

// skipping leaves out a byte of entries over a limit, following only
// strings and nesting, until the container at depth skip closes. Its
// grammar is checked all the same (syntax, in Read).
func (g *guard) skipping(c byte) (int, error) {
	switch {
	case g.inStr && (g.esc || g.hex > 0):
		if g.esc = false; g.hex > 0 {
			g.hex--
		} else if c == 'u' {
			g.hex = 4
		}
	case g.inStr:
		g.esc, g.inStr = c == '\\', c != '"'
	case c == '"':
		g.inStr = true
	case c == '[' || c == '{':
		g.depth++
	case c == ']' || c == '}':
		if g.depth--; g.depth < g.skip {
			g.skip = 0
			return int(c), nil
		}
	}
	return -1, nil
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// checkItems applies the entry limit of the container being read: the
// listing (depth 2) holds records, a record's members (depth 4) hold
// traits and resources; objects of fields, the answer (1), a record (3)
// and a resource (5), have a fixed bound. Within a record, entries over
// a limit are left out and the record marked.
func (g *guard) checkItems(c byte) (int, error) {
	n, d := g.items[g.depth], g.depth
	switch {
	case d == 2 && n > g.lim.MaxRecords:
		return 0, g.fail("\"%s\" holds more than %d records (plugin.max_records)", Printable(g.name[d]), g.lim.MaxRecords)
	case d == 4 && n > g.lim.MaxTraits && g.inRecord():
		g.mark(hostabi.InvalidTooManyEntries, "its \"%s\" holds more than %d entries (plugin.max_traits)", Printable(g.name[d]), g.lim.MaxTraits)
		g.skip = d
		return -1, nil
	case d == 4 && n > g.lim.MaxTraits:
		return 0, g.fail("a record's \"%s\" holds more than %d entries (plugin.max_traits)", Printable(g.name[d]), g.lim.MaxTraits)
	case (d == 3 || d == 5) && n > maxMembers && g.inRecord():
		g.mark(hostabi.InvalidTooManyEntries, "it holds more than %d members", maxMembers)
		g.skip = d
		return -1, nil
	case (d == 1 || d == 3 || d == 5) && n > maxMembers:
		return 0, g.fail("an object holds more than %d members", maxMembers)
	}
	return int(c), nil
}

// mark records the first fault of the record being read.
func (g *guard) mark(code, format string, args ...any) {
	m := mark{g.list, g.items[2] - 1}
	if _, ok := g.marks[m]; !ok {
		g.marks[m] = &hostabi.Invalid{Code: code, Reason: fmt.Sprintf(format, args...)}
	}
}

// where names the member being read, if any: ` in "resource_class"`.
func (g *guard) where() string {
	name := g.key[g.depth]
	if g.arr[g.depth] { // in an array: the member holding it
		name = g.name[g.depth]
	}
	if name == "" {
		return ""
	}
	return ` in "` + Printable(name) + `"`
}

func (g *guard) fail(format string, args ...any) error {
	return &limitError{fmt.Sprintf("answer refused at byte %d: ", g.off) + fmt.Sprintf(format, args...)}
}

func hexValue(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10
	}
	return 0 // the decoder refuses the escape
}
