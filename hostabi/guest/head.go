package guest

import (
	"bytes"
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
