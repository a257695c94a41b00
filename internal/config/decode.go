package config

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// maxValueErrors bounds decodeAll's passes: one per bad value.
const maxValueErrors = 50

// decodeAll decodes text into c and returns every value error, each
// naming its key, not only the first: the TOML decoder stops at the first
// bad value (a duration that is not one, a string for a number), so the
// bad key is taken out of the document and it is decoded again. A syntax
// error ends it at once (fatal: nothing was decoded). The line of the
// first error is the file's; later ones name their key only (the
// document decoded again is a re-encoding).
func decodeAll(text string, c *Config) (md toml.MetaData, errs []error, fatal bool) {
	md, err := toml.Decode(text, c)
	if err == nil {
		return md, nil, false
	}
	var raw map[string]any
	if _, rerr := toml.Decode(text, &raw); rerr != nil {
		return md, []error{describe(rerr, true, text)}, true // syntax: nothing more to read
	}
	for first := true; err != nil; first = false {
		errs = append(errs, describe(err, first, text))
		key := lastKey(err)
		if key == "" || len(errs) >= maxValueErrors || !deleteKey(raw, key) {
			return md, errs, true
		}
		var b bytes.Buffer
		if eerr := toml.NewEncoder(&b).Encode(raw); eerr != nil {
			return md, errs, true
		}
		pluginOnly := c.pluginOnly
		*c = *defaults()
		c.pluginOnly = pluginOnly
		md, err = toml.Decode(b.String(), c)
	}
	return md, errs, false
}

// typeError is the decoder's own form of a type mismatch (not a
// ParseError): `toml: line N (last key "K"): message`.
var typeError = regexp.MustCompile(`^toml: (?:line (\d+) )?\(last key "([^"]+)"\): (.*)$`)

// lastKey is the key a decode error is about, or "".
func lastKey(err error) string {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return pe.LastKey
	}
	if m := typeError.FindStringSubmatch(err.Error()); m != nil {
		return m[2]
	}
	return ""
}

// describe is a decode error as "line N, key K: message". Once the
// document decoded is a re-encoding (not first), the line is looked up
// in the file's text.
func describe(err error, first bool, text string) error {
	var pe toml.ParseError
	line, key, msg := 0, "", err.Error()
	if errors.As(err, &pe) {
		line, key, msg = pe.Position.Line, pe.LastKey, pe.Message
	} else if m := typeError.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		key, msg = m[2], m[3]
	} else {
		return err
	}
	if !first {
		line = lineOf(text, key)
	}
	switch {
	case key != "" && line > 0:
		return fmt.Errorf("line %d, key %s: %s", line, key, msg)
	case key != "":
		return fmt.Errorf("key %s: %s", key, msg)
	}
	return fmt.Errorf("line %d: %s", line, msg)
}

// deleteKey removes the dotted key from a decoded document; false when
// it is not there (a key path it cannot follow, such as one into an
// array of tables).
func deleteKey(doc map[string]any, key string) bool {
	parts := strings.Split(key, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := doc[p].(map[string]any)
		if !ok {
			return false
		}
		doc = next
	}
	last := parts[len(parts)-1]
	if _, ok := doc[last]; !ok {
		return false
	}
	delete(doc, last)
	return true
}

// lineOf is the line of key ("engine.interval") in text: the first
// "name =" after its table's header, or 0 when not found so simply (a
// dotted or inline key).
func lineOf(text, key string) int {
	table, name := "", key
	if i := strings.LastIndex(key, "."); i >= 0 {
		table, name = key[:i], key[i+1:]
	}
	in := table == ""
	for n, line := range strings.Split(text, "\n") {
		l := strings.TrimSpace(line)
		if strings.HasPrefix(l, "[") {
			in = strings.Trim(strings.SplitN(l, "#", 2)[0], "[] \t") == table
			continue
		}
		if k, _, ok := strings.Cut(l, "="); in && ok && strings.TrimSpace(k) == name {
			return n + 1
		}
	}
	return 0
}
