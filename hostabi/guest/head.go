package guest

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"unicode/utf8"

	"github.com/rpengine/rpengine/hostabi"
)

// fastResponseHead decodes a response head as the host's json.Marshal
// writes it (members in order, no escapes in strings, white space only
// after the value), without encoding/json's reflection, which costs a
// guest about 10x its native price on every page. ok is false for
// anything else: the caller then decodes it with encoding/json
// (FuzzResponseHead holds the two to the same result).
func fastResponseHead(b []byte) (h hostabi.HTTPResponseHead, ok bool) {
	p := headParser{b: b}
	if !p.lit(`{"status":`) {
		return h, false
	}
	if h.Status, ok = p.int(9); !ok {
		return h, false
	}
	if p.lit(`,"header":{`) {
		h.Header = map[string]string{}
		for first := true; !p.lit("}"); first = false {
			if !first && !p.lit(",") {
				return h, false
			}
			k, ok1 := p.str()
			ok2 := p.lit(":")
			v, ok3 := p.str()
			if !ok1 || !ok2 || !ok3 {
				return h, false
			}
			h.Header[k] = v
		}
	}
	if p.lit(`,"error":`) {
		if h.Error, ok = p.str(); !ok {
			return h, false
		}
	}
	h.Projected = p.lit(`,"projected":true`)
	if p.lit(`,"ref":`) {
		if p.i < len(p.b) && p.b[p.i] == '-' { // a uint32: even -0 is refused
			return h, false
		}
		ref, ok := p.int(9)
		if !ok {
			return h, false
		}
		h.Ref = uint32(ref)
	}
	if !p.lit("}") || len(bytes.TrimRight(p.b[p.i:], " ")) > 0 {
		return h, false
	}
	return h, true
}

type headParser struct {
	b []byte
	i int
}

func (p *headParser) lit(s string) bool {
	if !bytes.HasPrefix(p.b[p.i:], []byte(s)) {
		return false
	}
	p.i += len(s)
	return true
}

// int reads an integer of at most digits digits, as JSON writes it.
func (p *headParser) int(digits int) (int, bool) {
	neg := p.lit("-")
	start, n := p.i, 0
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' && p.i-start < digits {
		n = 10*n + int(p.b[p.i]-'0')
		p.i++
	}
	l := p.i - start
	if l == 0 || l > 1 && p.b[start] == '0' || p.i < len(p.b) && (p.b[p.i] >= '0' && p.b[p.i] <= '9' || p.b[p.i] == '.' || p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

// str reads a string without escapes or control bytes; its bytes must be
// UTF-8, as json.Marshal writes them.
func (p *headParser) str() (string, bool) {
	if !p.lit(`"`) {
		return "", false
	}
	start := p.i
	for p.i < len(p.b) {
		switch c := p.b[p.i]; {
		case c == '"':
			s := string(p.b[start:p.i])
			p.i++
			return s, utf8.ValidString(s)
		case c == '\\' || c < 0x20:
			return "", false
		}
		p.i++
	}
	return "", false
}

// appendFast appends h as json.Marshal writes it (the same bytes:
// TestFastRequestHead, FuzzRequestHead) without its reflection, its
// sorting through reflect.Value and its re-validation of the encoded
// projections, which cost a guest tens of microseconds on every page.
// ok is false when some string holds a byte it does not write as is
// (control, non-ASCII, a quote or backslash): the caller then marshals.
func (h *requestHead) appendFast(b []byte) ([]byte, bool) {
	ok := true
	str := func(s string) {
		b = append(b, '"')
		for i := 0; i < len(s); i++ {
			switch c := s[i]; {
			case c < 0x20 || c >= 0x7f || c == '"' || c == '\\':
				ok = false
			case c == '<' || c == '>' || c == '&': // json.Marshal's HTML escaping
				b = append(b, `\u00`...)
				b = append(b, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
			default:
				b = append(b, c)
			}
		}
		b = append(b, '"')
	}
	b = append(b, `{"service":`...)
	str(h.Service)
	b = append(b, `,"method":`...)
	str(h.Method)
	b = append(b, `,"path":`...)
	str(h.Path)
	if len(h.Header) > 0 {
		b = append(b, `,"header":{`...)
		for i, k := range slices.Sorted(maps.Keys(h.Header)) {
			if i > 0 {
				b = append(b, ',')
			}
			str(k)
			b = append(b, ':')
			str(h.Header[k])
		}
		b = append(b, '}')
	}
	for _, m := range [...]struct {
		name string
		raw  json.RawMessage
	}{{`,"project":`, h.Project}, {`,"keep":`, h.Keep}} {
		if len(m.raw) > 0 { // compact JSON: specCache made it with json.Marshal
			b = append(append(b, m.name...), m.raw...)
		}
	}
	return append(b, '}'), ok
}
