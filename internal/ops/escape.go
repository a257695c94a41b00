package ops

import (
	"fmt"
	"unicode/utf8"
)

// visible rewrites the characters html/template leaves raw but a reader
// must not get raw: C0 and C1 controls (all but tab, newline and carriage
// return, which the templates themselves use), DEL, and the bidi and
// invisible formatting characters that make a node name read as another
// (U+202E turns "gpu-exe.txt" into "gpu-txt.exe"). Each becomes its
// escape, "\u202e", which is plain text in any HTML context. The
// templates hold none of these characters, so only data is rewritten.
func visible(page []byte) []byte {
	at := -1
	for i := 0; i < len(page); {
		r, n := utf8.DecodeRune(page[i:])
		if hidden(r) {
			at = i
			break
		}
		i += n
	}
	if at < 0 {
		return page
	}
	out := make([]byte, 0, len(page)+64)
	out = append(out, page[:at]...)
	for i := at; i < len(page); {
		r, n := utf8.DecodeRune(page[i:])
		if hidden(r) {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, page[i:i+n]...)
		}
		i += n
	}
	return out
}

func hidden(r rune) bool {
	switch {
	case r < 0x20:
		return r != '\t' && r != '\n' && r != '\r'
	case r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200b, r == 0x200c, r == 0x200d, r == 0x200e, r == 0x200f, r == 0xfeff:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}
