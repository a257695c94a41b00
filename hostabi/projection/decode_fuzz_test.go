package projection

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
)

var fuzzProjection = Projection{
	Array:  "a",
	Fields: []Field{{"s", KindString}, {"b", KindBool}, {"l", KindStrings}, {"r", KindRaw}},
	Top:    []Field{{"t", KindString}, {"u", KindStrings}},
}

// FuzzProject checks the projector against encoding/json: it never panics,
// and it succeeds exactly when the document has the projected shape, with
// the same values json.Unmarshal finds. Documents with a repeated key are
// left out of the comparison: a map keeps only the last occurrence, while
// the projector also checks the earlier ones.
func FuzzProject(f *testing.F) {
	for _, s := range []string{
		`{"a": [{"s": "x", "b": true, "l": ["p", "q"], "r": {"k": [1, 2.5e3]}}], "t": "next"}`,
		`{"a": [{"s": null, "b": null, "l": null, "r": null}, {}], "t": null, "u": []}`,
		`{"a": [{"s": "\u00e9\ud83d\ude00\"", "x": [{"y": "]"}]}]}`,
		`{"a": [], "t": 1}`, `{"a": [{"s": 1}]}`, `{"a": [7]}`, `{}`, `[]`, `{"a": [{"l": ["x", null]}]}`,
		"{\"a\": [{\"s\": \"\xff\xfe\"}]}", `{"\u0061": [{"\u0073": "esc"}]}`,
		`{"a": [{"r": -0.5e+10}, {"r": 01}]}`, `{"a": [] , }`, `{"a": []} x`, `{"a": [{"s": "\x"}]}`, "{\"a\": [\"\t\"]}",
		`{"a": [{"r": [[[[{"z": [tru]}]]]]}]}`,
	} {
		f.Add([]byte(s))
	}
	spec := mustSpec(f, fuzzProjection)
	f.Fuzz(func(t *testing.T, doc []byte) {
		checkSubset(t, doc)
		if got, want := validates(doc), json.Valid(doc); got != want {
			t.Fatalf("doc %q: scanner says valid = %v, json.Valid %v", doc, got, want)
		}
		r, err := parseWire(HostProject(doc, spec))
		if err == nil && !json.Valid(doc) {
			t.Fatalf("doc %q: projected an invalid document", doc)
		}
		if hasRepeatedKey(doc) {
			return
		}
		want, ok := oracle(doc)
		if ok != (err == nil) {
			t.Fatalf("doc %q: projector err = %v, oracle ok = %v", doc, err, ok)
		}
		if !ok {
			return
		}
		if got := view(t, &r); !reflect.DeepEqual(got, want) {
			t.Fatalf("doc %q:\ngot  %#v\nwant %#v", doc, got, want)
		}
	})
}

// validates runs the scanner alone over doc.
func validates(doc []byte) bool {
	s := scanner{doc: doc, w: &wireWriter{}}
	s.ws()
	return s.skip(0) == nil && s.end() == nil
}

// projected is a decoded projection in a comparable form.
type projected struct {
	Rows [][]any
	Top  []any
}

func view(t *testing.T, r *Records) projected {
	var p projected
	for i := range r.Len() {
		row := make([]any, len(fuzzProjection.Fields))
		for f, fd := range fuzzProjection.Fields {
			row[f] = value(t, r.State(i, f), fd.Kind,
				func() string { return r.String(i, f) }, func() bool { return r.Bool(i, f) }, func() []string { return r.Strings(i, f) })
		}
		p.Rows = append(p.Rows, row)
	}
	for k, fd := range fuzzProjection.Top {
		p.Top = append(p.Top, value(t, r.TopState(k), fd.Kind,
			func() string { return r.TopString(k) }, func() bool { return r.TopBool(k) }, func() []string { return r.TopStrings(k) }))
	}
	return p
}

type absentValue struct{}

// value reads a slot with the accessor that matches its kind.
func value(t *testing.T, st State, k Kind, s func() string, b func() bool, l func() []string) any {
	switch st {
	case Absent:
		return absentValue{}
	case Null:
		return nil
	}
	switch k {
	case KindString:
		return s()
	case KindBool:
		return b()
	case KindStrings:
		return l()
	}
	var v any
	if err := unmarshalNumbers([]byte(s()), &v); err != nil {
		t.Fatalf("raw value %q is not JSON: %v", s(), err)
	}
	return v
}

// oracle computes the expected projection with encoding/json.
func oracle(doc []byte) (projected, bool) {
	var p projected
	var top map[string]any
	if unmarshalNumbers(doc, &top) != nil || top == nil {
		return p, false
	}
	arr, ok := top["a"].([]any)
	if !ok {
		return p, false
	}
	for _, el := range arr {
		obj, ok := el.(map[string]any)
		if !ok {
			return p, false
		}
		row := make([]any, len(fuzzProjection.Fields))
		for f, fd := range fuzzProjection.Fields {
			if row[f], ok = expect(obj, fd); !ok {
				return p, false
			}
		}
		p.Rows = append(p.Rows, row)
	}
	for _, fd := range fuzzProjection.Top {
		v, ok := expect(top, fd)
		if !ok {
			return p, false
		}
		p.Top = append(p.Top, v)
	}
	return p, true
}

// unmarshalNumbers is json.Unmarshal keeping numbers as json.Number: a
// number too large for a float64 ("1e400") is valid JSON, which the
// projector rightly accepts, but float64 decoding refuses.
func unmarshalNumbers(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the value")
	}
	return nil
}

func expect(obj map[string]any, fd Field) (any, bool) {
	v, present := obj[fd.Name]
	switch {
	case !present:
		return absentValue{}, true
	case v == nil:
		return nil, true
	}
	switch fd.Kind {
	case KindString:
		s, ok := v.(string)
		return s, ok
	case KindBool:
		b, ok := v.(bool)
		return b, ok
	case KindStrings:
		arr, ok := v.([]any)
		out := make([]string, 0, len(arr))
		for _, e := range arr {
			s, isStr := e.(string)
			if !isStr {
				return nil, false
			}
			out = append(out, s)
		}
		return out, ok
	}
	return v, true
}

// hasRepeatedKey reports whether any object in doc repeats a key.
func hasRepeatedKey(doc []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(doc))
	type frame struct {
		keys   map[string]bool
		object bool
		expect bool // next string token in an object is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if k, isKey := tok.(string); isKey && top != nil && top.object && top.expect {
			if top.keys[k] {
				return true
			}
			top.keys[k] = true
			top.expect = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{keys: map[string]bool{}, object: true, expect: true})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].expect = true
		}
	}
}

// subProjection reads part of fuzzProjection, in another order.
var subProjection = Projection{Array: "a", Fields: []Field{{"l", KindStrings}, {"s", KindString}, {"b", KindBool}}, Top: []Field{{"u", KindStrings}}}

// checkSubset: the frame Subset derives from the whole projection is the
// frame projecting by the part gives, byte for byte; a document the whole
// projection refuses keeps its error frame.
func checkSubset(t *testing.T, doc []byte) {
	t.Helper()
	full, err := HostProjectLimited(doc, fuzzProjection, Limits{MaxBytes: 1 << 30, Headroom: 8})
	if err != nil {
		t.Fatal(err)
	}
	direct, err := HostProjectLimited(doc, subProjection, Limits{MaxBytes: 1 << 30, Headroom: 8})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Subset(full[8:], fuzzProjection, subProjection, 8)
	if err != nil {
		t.Fatal(err)
	}
	if _, ferr := parseWire(full[8:]); ferr != nil { // the whole shape is checked: its error stays
		if !bytes.Equal(got, full) {
			t.Fatalf("doc %q: subset %q of the error frame %q", doc, got, full)
		}
		return
	}
	if !sameRecords(got[8:], direct[8:], subProjection) {
		t.Fatalf("doc %q: subset %q, projected %q", doc, got, direct)
	}
}

// sameRecords compares two frames of p value by value (the blob's order
// may differ).
func sameRecords(a, b []byte, p Projection) bool {
	ra, erra := parseWire(a)
	rb, errb := parseWire(b)
	if erra != nil || errb != nil {
		return (erra == nil) == (errb == nil) && bytes.Equal(a, b)
	}
	if ra.Len() != rb.Len() {
		return false
	}
	val := func(r *Records, st State, k Kind, get func() (string, bool, []string)) any {
		s, bl, l := get()
		switch k {
		case KindBool:
			return [2]any{st, bl}
		case KindStrings:
			return [2]any{st, strings.Join(l, "\x00") + fmt.Sprint(len(l))}
		}
		return [2]any{st, s}
	}
	for i := range ra.Len() {
		for f, fl := range p.Fields {
			get := func(r *Records) func() (string, bool, []string) {
				return func() (string, bool, []string) {
					if fl.Kind == KindStrings {
						return "", false, r.Strings(i, f)
					}
					if fl.Kind == KindBool {
						return "", r.Bool(i, f), nil
					}
					return r.String(i, f), false, nil
				}
			}
			if val(&ra, ra.State(i, f), fl.Kind, get(&ra)) != val(&rb, rb.State(i, f), fl.Kind, get(&rb)) {
				return false
			}
		}
	}
	for k, fl := range p.Top {
		if ra.TopState(k) != rb.TopState(k) || fl.Kind == KindStrings && !reflect.DeepEqual(ra.TopStrings(k), rb.TopStrings(k)) ||
			fl.Kind == KindString && ra.TopString(k) != rb.TopString(k) {
			return false
		}
	}
	return true
}

func TestSubsetRefusesWhatTheFrameLacks(t *testing.T) {
	for _, to := range []Projection{
		{Array: "b"},
		{Array: "a", Fields: []Field{{"s", KindBool}}},
		{Array: "a", Fields: []Field{{"zz", KindString}}},
		{Array: "a", Top: []Field{{"s", KindString}}},
	} {
		if err := SubsetOf(fuzzProjection, to); err == nil {
			t.Errorf("%+v accepted", to)
		}
	}
	if err := SubsetOf(fuzzProjection, subProjection); err != nil {
		t.Error(err)
	}
}
