package placementfake

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// decode parses a JSON body strictly: the real schemas all say
// additionalProperties: false, so unknown fields are a 400 here too.
func (c *call) decode(v any) bool {
	dec := json.NewDecoder(bytes.NewReader(c.body))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("extra data after the JSON value")
	}
	if err == nil {
		return true
	}
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		c.fail(http.StatusBadRequest, "", "Malformed JSON: "+err.Error())
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		c.fail(http.StatusBadRequest, "", "JSON does not validate: Additional properties are not allowed ('"+name+"' was unexpected)")
	case errors.As(err, &typ):
		c.fail(http.StatusBadRequest, "", "JSON does not validate: "+typ.Field+" is not of type '"+jsonType(typ.Type.Kind().String())+"'")
	default:
		c.fail(http.StatusBadRequest, "", "JSON does not validate: "+err.Error())
	}
	return false
}

func jsonType(goKind string) string {
	switch goKind {
	case "map", "struct":
		return "object"
	case "slice":
		return "array"
	case "int64", "int":
		return "integer"
	}
	return goKind
}

// intField is a JSON integer that remembers whether it was there, null, or
// not an integer at all (e.g. 4.6e+18 from a client that went through
// float64, which jsonschema's "integer" refuses).
type intField struct {
	Set, Null, Bad bool
	Value          int64
	Raw            string
}

func (f *intField) UnmarshalJSON(b []byte) error {
	f.Set, f.Raw = true, string(b)
	if f.Raw == "null" {
		f.Null = true
		return nil
	}
	v, err := strconv.ParseInt(f.Raw, 10, 64)
	var num *strconv.NumError
	switch {
	case err == nil:
		f.Value = v
	case errors.As(err, &num) && errors.Is(num.Err, strconv.ErrRange):
		f.Value = -1 // an integer, but one no generation can equal
	default:
		f.Bad = true
	}
	return nil
}

// numField is a JSON number that remembers its text, like intField.
type numField struct {
	Set, Bad bool
	Value    float64
	Raw      string
}

func (f *numField) UnmarshalJSON(b []byte) error {
	f.Set, f.Raw = true, string(b)
	v, err := strconv.ParseFloat(f.Raw, 64)
	f.Value, f.Bad = v, err != nil
	return nil
}

// check enforces "required, integer, not null" for a schema field and
// answers 400 if it fails.
func (f intField) check(c *call, name string) bool {
	switch {
	case !f.Set:
		c.fail(http.StatusBadRequest, "", "JSON does not validate: '"+name+"' is a required property")
	case f.Null || f.Bad:
		c.fail(http.StatusBadRequest, "", "JSON does not validate: "+pyRepr(f.Raw)+" is not of type 'integer'")
	default:
		return true
	}
	return false
}

// inRange checks an optional integer field against the inventory schema.
func (f intField) inRange(c *call, name string, min, def int64) (int64, bool) {
	if !f.Set {
		return def, true
	}
	if !f.check(c, name) {
		return 0, false
	}
	switch {
	case f.Value < min:
		c.fail(http.StatusBadRequest, "", "JSON does not validate: "+f.Raw+" is less than the minimum of "+strconv.FormatInt(min, 10))
		return 0, false
	case f.Value > maxInt:
		c.fail(http.StatusBadRequest, "", "JSON does not validate: "+f.Raw+" is greater than the maximum of "+strconv.Itoa(maxInt))
		return 0, false
	}
	return f.Value, true
}

const maxInt = 2147483647

// validName is the real '^[A-Z0-9_]+$' pattern with its 255 length limit.
func validName(s string) bool {
	if s == "" || len(s) > 255 {
		return false
	}
	for _, r := range s {
		if (r < 'A' || r > 'Z') && (r < '0' || r > '9') && r != '_' {
			return false
		}
	}
	return true
}

func validCustomName(s string) bool {
	return strings.HasPrefix(s, "CUSTOM_") && len(s) > len("CUSTOM_") && validName(s)
}

// pyRepr shows a raw JSON value the way jsonschema's messages do: strings
// in single quotes, null as None.
func pyRepr(raw string) string {
	if raw == "null" {
		return "None"
	}
	var s string
	if json.Unmarshal([]byte(raw), &s) == nil {
		return "'" + s + "'"
	}
	return raw
}

// pyList shows a list of strings as Python's repr does.
func pyList(items []string) string {
	quoted := make([]string, len(items))
	for i, it := range items {
		quoted[i] = "'" + it + "'"
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}
