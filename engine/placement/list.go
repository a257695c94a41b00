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
	// Duplicate-name checks cost 10% and guard nothing here: a repeated
	// key just overwrites, as encoding/json does.
	dec := jsontext.NewDecoder(r, jsontext.AllowDuplicateNames(true))
	if err := expect(dec, '{'); err != nil {
		return err
	}
	for dec.PeekKind() == '"' {
		key, err := dec.ReadToken()
		if err != nil {
			return err
		}
		if key.String() != "resource_providers" {
			if err := dec.SkipValue(); err != nil {
				return err
			}
			continue
		}
		if err := expect(dec, '['); err != nil {
			return err
		}
		for dec.PeekKind() == '{' {
			p, err := decodeProvider(dec)
			if err != nil {
				return err
			}
			*l = append(*l, p)
		}
		if err := expect(dec, ']'); err != nil {
			return err
		}
	}
	return expect(dec, '}')
}

func decodeProvider(dec *jsontext.Decoder) (Provider, error) {
	var p Provider
	if err := expect(dec, '{'); err != nil {
		return p, err
	}
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return p, err
		}
		key := tok.String() // a token dies with the next read
		switch key {
		case "uuid", "name", "parent_provider_uuid":
			err = decodeString(dec, key, &p)
		case "generation":
			var v jsontext.Value
			if v, err = dec.ReadValue(); err == nil {
				err = p.Generation.UnmarshalJSON(bytes.Clone(v))
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
		p.ParentUUID = &s
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
