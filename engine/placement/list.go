package placement

import (
	"bytes"
	"fmt"
	"io"

	"github.com/go-json-experiment/json/jsontext"
)

// providerList decodes GET /resource_providers by streaming tokens and
// keeping only uuid, name, generation and parent. The answer carries six
// links per provider; at 10,000 providers reflection-based decoding of
// it was 80% of an idle cycle's CPU (BenchmarkDecodeProviders).
type providerList []Provider

func (l *providerList) decodeFrom(r io.Reader) error {
	return listing{DefaultMaxProviders, true, l.add}.decodeFrom(r)
}

func (l *providerList) add(p Provider) error {
	*l = append(*l, p)
	return nil
}

// generationMap decodes the same listing into uuid -> generation and
// nothing else: what an idle cycle needs. At 100,000 providers the list
// and the names were 15 MB of garbage every cycle.
type generationMap map[string]Generation

func (m generationMap) decodeFrom(r io.Reader) error {
	return listing{DefaultMaxProviders, false, m.add}.decodeFrom(r)
}

func (m generationMap) add(p Provider) error {
	if _, dup := m[p.UUID]; dup {
		return fmt.Errorf("provider %s listed twice", p.UUID)
	}
	m[p.UUID] = p.Generation
	return nil
}

// decodeProviders calls each for every provider of a listing; names are
// read only when wanted.
func decodeProviders(r io.Reader, names bool, each func(Provider) error) error {
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
		for dec.PeekKind() == '{' {
			p, err := decodeProvider(dec, names)
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

func decodeProvider(dec *jsontext.Decoder, names bool) (Provider, error) {
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
			if v, err = dec.ReadValue(); err == nil {
				err = p.Generation.UnmarshalJSON(v) // copies v into a string
			}
		default:
			err = dec.SkipValue()
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
