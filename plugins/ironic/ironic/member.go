package ironic

import (
	"encoding/json"
	"strings"
)

// member returns the JSON text of the value of key in the JSON object
// text obj, and whether obj has it (the last, if it has it twice, as
// encoding/json decodes it), without decoding the other members: a node's
// properties hold a dozen keys and a rule wants one, and decoding them
// all cost a Wasm guest ten times the rest of the listing
// (BenchmarkListNodesFields10k). obj is valid JSON (the projection that
// gave it parsed it); ok is false for anything but an object.
func member(obj, key string) (value string, found, ok bool) {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return "", false, false
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return "", false, true
	}
	for i < len(obj) && obj[i] == '"' {
		end := stringEnd(obj, i)
		if end < 0 {
			return "", false, false
		}
		k := obj[i:end]
		i = skipSpace(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return "", false, false
		}
		i = skipSpace(obj, i+1)
		vend := valueEnd(obj, i)
		if vend < 0 {
			return "", false, false
		}
		if keyIs(k, key) {
			value, found = obj[i:vend], true
		}
		i = skipSpace(obj, vend)
		switch {
		case i < len(obj) && obj[i] == ',':
			i = skipSpace(obj, i+1)
		case i < len(obj) && obj[i] == '}':
			return value, found, true
		default:
			return "", false, false
		}
	}
	return "", false, false
}

// keyIs says whether the quoted JSON string q decodes to key.
func keyIs(q, key string) bool {
	if strings.IndexByte(q, '\\') < 0 {
		return q[1:len(q)-1] == key
	}
	var s string
	return json.Unmarshal([]byte(q), &s) == nil && s == key
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// stringEnd is the index after the string starting at s[i] ('"'), -1 if
// it does not end.
func stringEnd(s string, i int) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// valueEnd is the index after the value starting at s[i], -1 if none.
func valueEnd(s string, i int) int {
	if i >= len(s) {
		return -1
	}
	switch s[i] {
	case '"':
		return stringEnd(s, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(s); j++ {
			switch s[j] {
			case '"':
				if j = stringEnd(s, j) - 1; j < 0 {
					return -1
				}
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(s) && !strings.ContainsRune(",}] \t\n\r", rune(s[j])) {
		j++
	}
	if j == i {
		return -1
	}
	return j
}
