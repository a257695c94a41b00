package wasmhost

import (
	"fmt"
	"io"
)

// Limits bound what one answer of a plugin may hold. They are checked on
// the answer's bytes as they stream in, before the JSON decoder buffers a
// value, so a hostile answer is refused before it is held in memory.
// Zero values take the defaults.
type Limits struct {
	// MaxRecords caps the entries of a listing: nodes, instances, or
	// uuids in a deletion check.
	MaxRecords int
	// MaxField caps the bytes of any string or number in an answer.
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

// limitError is an answer over a limit; the first one found ends the read.
type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }

// guard passes an answer's bytes through while tracking just enough of
// the JSON grammar to enforce Limits: string and number lengths, entries
// per array or object by depth, and depth. It does not validate JSON; the
// decoder behind it does. The names it quotes are cut short.
type guard struct {
	r   io.Reader
	lim Limits
	off int64
	err error

	inStr, esc bool
	tokLen     int    // bytes of the current string or number
	inNum      bool   // in a number (or literal) outside strings
	str        []byte // the current string's first bytes, for names
	last       string // the last string closed, a key if ':' follows

	depth int
	items [maxAnswerDepth + 2]int
	name  [maxAnswerDepth + 2]string // the member holding each container
	key   [maxAnswerDepth + 2]string // the current key of each object
	arr   [maxAnswerDepth + 2]bool   // whether each container is an array
}

const nameLen = 40

func newGuard(r io.Reader, lim Limits) *guard { return &guard{r: r, lim: lim.withDefaults()} }

func (g *guard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.r.Read(p)
	for i := range n {
		if g.err = g.step(p[i]); g.err != nil {
			return i, g.err // the decoder never sees the offending byte
		}
		g.off++
	}
	return n, err
}

func (g *guard) step(c byte) error {
	if g.inStr {
		switch {
		case g.esc:
			g.esc = false
		case c == '\\':
			g.esc = true
		case c == '"':
			g.inStr = false
			g.last = string(g.str)
			return nil
		}
		if g.tokLen++; g.tokLen > g.lim.MaxField && (g.depth > 1 || g.tokLen > maxMessage) {
			limit := g.lim.MaxField
			if g.depth <= 1 {
				limit = maxMessage
			}
			return g.fail("a string%s longer than %d bytes (plugin.max_field_length), starting \"%s\"", g.where(), limit, Printable(string(g.str)))
		}
		if len(g.str) < nameLen {
			g.str = append(g.str, c)
		}
		return nil
	}
	switch c {
	case '"':
		g.inStr, g.inNum, g.tokLen, g.str = true, false, 0, g.str[:0]
		return nil
	case ' ', '\t', '\n', '\r':
		g.inNum = false
		return nil
	case '[', '{':
		g.inNum = false
		if g.depth++; g.depth > maxAnswerDepth {
			return g.fail("nested deeper than %d levels", maxAnswerDepth)
		}
		g.items[g.depth], g.name[g.depth], g.key[g.depth], g.arr[g.depth] = 1, g.key[g.depth-1], "", c == '['
		return nil
	case ']', '}':
		g.inNum = false
		if g.depth > 0 {
			g.depth--
		}
		return nil
	case ':':
		g.inNum = false
		g.key[g.depth] = g.last
		return nil
	case ',':
		g.inNum = false
		g.items[g.depth]++
		return g.checkItems()
	}
	if !g.inNum {
		g.inNum, g.tokLen = true, 0
	}
	if g.tokLen++; g.tokLen > g.lim.MaxField {
		return g.fail("a number or literal%s longer than %d bytes (plugin.max_field_length)", g.where(), g.lim.MaxField)
	}
	return nil
}

// checkItems applies the entry limit of the container being read: the
// listing (depth 2) holds records, a record's members hold traits and
// resources (depth 4 and below); objects of fields have a fixed bound.
func (g *guard) checkItems() error {
	n, d := g.items[g.depth], g.depth
	switch {
	case d == 2 && n > g.lim.MaxRecords:
		return g.fail("\"%s\" holds more than %d records (plugin.max_records)", Printable(g.name[d]), g.lim.MaxRecords)
	case d >= 4 && n > g.lim.MaxTraits:
		return g.fail("a record's \"%s\" holds more than %d entries (plugin.max_traits)", Printable(g.name[d]), g.lim.MaxTraits)
	case (d == 1 || d == 3) && n > maxMembers:
		return g.fail("an object holds more than %d members", maxMembers)
	}
	return nil
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
