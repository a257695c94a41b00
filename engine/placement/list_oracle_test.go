package placement

import (
	"bytes"
	"fmt"
	"io"

	"github.com/go-json-experiment/json/jsontext"
)

// The token decoder the listing used before scan.go, kept as the oracle
// the scanner must agree with (TestScannerAgreesWithTokenDecoder).

// decodeProvidersTokens calls each for every provider of a listing; names are
// read only when wanted.
func decodeProvidersTokens(r io.Reader, names bool, each func(Provider) error) error {
	// Duplicate-name checks cost 10% and guard nothing here: a repeated
	// key just overwrites, as encoding/json does.
	dec := jsontext.NewDecoder(r, jsontext.AllowDuplicateNames(true))
	if err := expect(dec, '{'); err != nil {
		return err
	}
	found := false
	for dec.PeekKind() == '"' {
		key, err := readName(dec)
		if err != nil {
			return err
		}
		if string(key) != "resource_providers" {
			if err := dec.SkipValue(); err != nil {
				return err
			}
			continue
		}
		found = true
		if err := expect(dec, '['); err != nil {
			return err
		}
		gens := newGenerations()
		for dec.PeekKind() == '{' {
			p, err := decodeProvider(dec, names, gens)
			if err != nil {
				return err
			}
			if err := each(p); err != nil {
				return err
			}
		}
		if err := expect(dec, ']'); err != nil {
			return err
		}
	}
	if err := expect(dec, '}'); err != nil {
		return err
	}
	return required("resource_providers", !found)
}

func decodeProvider(dec *jsontext.Decoder, names bool, gens *generations) (Provider, error) {
	var p Provider
	if err := expect(dec, '{'); err != nil {
		return p, err
	}
	for dec.PeekKind() == '"' {
		name, err := readName(dec)
		if err != nil {
			return p, err
		}
		key := "member" // for errors: the name itself dies with the next read
		switch string(name) {
		case "uuid":
			key, err = "uuid", decodeString(dec, "uuid", &p)
		case "name", "parent_provider_uuid":
			key = "name"
			if string(name) == "parent_provider_uuid" {
				key = "parent_provider_uuid"
			}
			if names {
				err = decodeString(dec, key, &p)
			} else {
				err = dec.SkipValue()
			}
		case "generation":
			key = "generation"
			var v jsontext.Value
			if v, err = dec.ReadValue(); err == nil && v.Kind() != 'n' {
				p.Generation = gens.of(v) // a copy of v, or the same one shared
			} else if err == nil {
				err = p.Generation.UnmarshalJSON(v) // null: missing generation
			}
		default:
			err = skipValue(dec)
		}
		if err != nil {
			return p, fmt.Errorf("provider %q: %s: %w", p.UUID, key, err)
		}
	}
	if p.UUID == "" || p.Generation == "" {
		return p, fmt.Errorf("provider without uuid or generation in the listing")
	}
	return p, expect(dec, '}')
}

// readName reads an object member's name. A plain name (no escapes) is a
// view of the decoder's buffer, valid until the next read: comparing it
// allocates nothing, where Token.String allocated a string per member,
// eight per provider of a listing.
func readName(dec *jsontext.Decoder) ([]byte, error) {
	v, err := dec.ReadValue()
	if err != nil {
		return nil, err
	}
	if len(v) < 2 || v[0] != '"' {
		return nil, fmt.Errorf("want an object member name, got %s", v.Kind())
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return v[1 : len(v)-1], nil
	}
	return jsontext.AppendUnquote(nil, v)
}

func decodeString(dec *jsontext.Decoder, key string, p *Provider) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() == 'n' {
		return nil
	}
	if tok.Kind() != '"' {
		return fmt.Errorf("want a string, got %v", tok.Kind())
	}
	s := tok.String()
	switch key {
	case "uuid":
		p.UUID = s
	case "name":
		p.Name = s
	default:
		parent := s // its own variable: taking s's address would put every uuid's header on the heap
		p.ParentUUID = &parent
	}
	return nil
}

// skipValue reads past a value the engine ignores (the links, six per
// provider). ReadValue checks it as SkipValue does but in one pass over
// the bytes, where SkipValue reads it token by token: half the decode.
func skipValue(dec *jsontext.Decoder) error {
	_, err := dec.ReadValue()
	return err
}

func expect(dec *jsontext.Decoder, kind jsontext.Kind) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() != kind {
		return fmt.Errorf("malformed provider list: want %v, got %v", kind, tok.Kind())
	}
	return nil
}
