package projection

import (
	"encoding/json"
	"fmt"
)

// HostProject runs a projection natively and returns the frame the guest
// reads (an error frame if spec or doc is bad). It is the host side of
// Project: internal/wasmhost calls it for Wasm plugins, and native builds
// of this package call it directly, so both run the same decoder.
// Plugins call Project, not this.
func HostProject(doc, spec []byte) []byte {
	p, err := decodeSpec(spec)
	if err != nil {
		return errorFrame(err.Error())
	}
	frame, err := project(doc, p, Limits{})
	if err != nil {
		return errorFrame("json projection: " + err.Error())
	}
	return frame
}

// ProjectLocal runs the projection in the calling process. Natively that
// is what Project does; in a Wasm guest it is the host's scanner compiled
// to Wasm, 10× slower than asking the host, and kept only so that cost can
// be measured (hostabi/RATIONALE.md, "JSON projection"). Plugins call
// Project.
func ProjectLocal(doc []byte, p Projection) (Records, error) {
	spec, err := encodeSpec(p)
	if err != nil {
		return Records{}, err
	}
	return parseWire(HostProject(doc, spec))
}

// project scans doc once, validating all of it as encoding/json would
// (json.Valid accepts exactly what this accepts; the fuzz test holds it to
// that) and copying only the requested values.
func project(doc []byte, p Projection, lim Limits) ([]byte, error) {
	s := scanner{doc: doc, w: &wireWriter{blob: make([]byte, 0, len(doc)/2)}, lim: lim}
	fields, top := index(p.Fields), index(p.Top)
	for range p.Top {
		s.w.top = append(s.w.top, 0, absentMark)
	}
	s.ws()
	if s.peek() != '{' {
		// Validate first: "not valid JSON" beats "not an object".
		kind := s.kindName()
		if err := s.skip(0); err != nil {
			return nil, err
		}
		if err := s.end(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("document is a JSON %s, want an object", kind)
	}
	nrec, sawArray := 0, p.Array == ""
	err := s.members(0, func(key []byte) error {
		if p.Array != "" && string(key) == p.Array {
			sawArray = true
			n, err := s.records(p, fields)
			nrec = n
			return err
		}
		if k, ok := top[string(key)]; ok {
			a, b, err := s.value(p.Top[k], 1)
			s.w.top[2*k], s.w.top[2*k+1] = a, b
			return err
		}
		return s.skip(1)
	})
	if err == nil {
		err = s.end()
	}
	if err != nil {
		return nil, err
	}
	if !sawArray {
		return nil, fmt.Errorf("document has no member %q", p.Array)
	}
	if err := s.checkLimits(0); err != nil {
		return nil, err
	}
	return s.w.frame(lim.Headroom, nrec, len(p.Fields)), nil
}

func index(fs []Field) map[string]int {
	m := make(map[string]int, len(fs))
	for i, f := range fs {
		m[f.Name] = i
	}
	return m
}

// records reads the projected array; a repeated member replaces the
// earlier one, as in a JSON object decoded into a map.
func (s *scanner) records(p Projection, fields map[string]int) (int, error) {
	s.w.slots = s.w.slots[:0]
	if s.peek() != '[' {
		kind := s.kindName()
		if err := s.skip(1); err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("member %q is a JSON %s, want an array", p.Array, kind)
	}
	nf, n := len(p.Fields), 0
	err := s.elements(1, func() error {
		if s.peek() != '{' {
			kind := s.kindName()
			if err := s.skip(2); err != nil {
				return err
			}
			return fmt.Errorf("%s[%d] is a JSON %s, want an object", p.Array, n, kind)
		}
		base := len(s.w.slots)
		for range nf {
			s.w.slots = append(s.w.slots, 0, absentMark)
		}
		err := s.members(2, func(key []byte) error {
			f, ok := fields[string(key)]
			if !ok {
				return s.skip(3)
			}
			a, b, err := s.value(p.Fields[f], 3)
			if err != nil {
				if _, syntax := err.(*syntaxError); syntax {
					return err
				}
				return fmt.Errorf("%s[%d].%w", p.Array, n, err)
			}
			s.w.slots[base+2*f], s.w.slots[base+2*f+1] = a, b
			return nil
		})
		n++
		if err == nil {
			err = s.checkLimits(n)
		}
		return err
	})
	return n, err
}

// value reads one projected value of kind f.Kind at nesting depth and
// returns its slot.
func (s *scanner) value(f Field, depth int) (a, b uint32, err error) {
	c := s.peek()
	if c == 'n' {
		return 0, nullMark, s.literal("null")
	}
	switch f.Kind {
	case KindString:
		if c == '"' {
			return s.appendString()
		}
	case KindBool:
		if c == 't' {
			return 1, 0, s.literal("true")
		}
		if c == 'f' {
			return 0, 0, s.literal("false")
		}
	case KindStrings:
		if c == '[' {
			start, n := uint32(len(s.w.list)/2), uint32(0)
			err := s.elements(depth, func() error {
				if s.peek() != '"' {
					kind := s.kindName()
					if err := s.skip(depth + 1); err != nil {
						return err
					}
					return fmt.Errorf("%s[%d] is a JSON %s, want a string", f.Name, n, kind)
				}
				off, l, err := s.appendString()
				s.w.list = append(s.w.list, off, l)
				n++
				return err
			})
			return start, n, err
		}
	case KindRaw:
		start := s.pos
		if err := s.skip(depth); err != nil {
			return 0, 0, err
		}
		return s.appendBlob(s.doc[start:s.pos])
	}
	kind := s.kindName()
	if err := s.skip(depth); err != nil {
		return 0, 0, err
	}
	return 0, 0, fmt.Errorf("%s is a JSON %s, want %s", f.Name, kind, kindWant[f.Kind])
}

var kindWant = map[Kind]string{
	KindString:  "a string or null",
	KindBool:    "true, false or null",
	KindStrings: "an array of strings or null",
}

func (s *scanner) appendBlob(v []byte) (uint32, uint32, error) {
	off := uint32(len(s.w.blob))
	s.w.blob = append(s.w.blob, v...)
	return off, uint32(len(v)), nil
}

// appendString copies the string at pos, unescaped, to the blob.
func (s *scanner) appendString() (uint32, uint32, error) {
	start := s.pos
	raw, simple, err := s.str()
	if err != nil {
		return 0, 0, err
	}
	if !simple {
		// Escapes or non-ASCII: let encoding/json decode it, so the result
		// is exactly what json.Unmarshal gives (invalid UTF-8 → U+FFFD).
		var v string
		if err := json.Unmarshal(s.doc[start:s.pos], &v); err != nil {
			return 0, 0, s.fail("bad string")
		}
		raw = []byte(v)
	}
	return s.appendBlob(raw)
}
