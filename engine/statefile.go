package engine

import (
	"fmt"
	"io"
	"slices"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/rpengine/rpengine/engine/placement"
)

// readStateFile decodes a state file as json v2 would decode it into a
// stateFile, streaming, and shares equal values between providers.
//
// At 100,000 providers the file is about 36 MB, and reflection-based
// decoding cost every restart 0.8 s of CPU and about 130 MB of heap: a map
// and three slices per provider, though nearly all providers hold the same
// inventory, traits and managed sets (BenchmarkReadStateFile). Here each
// distinct value (an inventory, a trait list, a Managed) is decoded once,
// by json v2 itself, and shared by every provider that holds the same
// bytes; a provider costs its uuid, its generation and its entry.
// Sharing is safe because the engine never modifies these values in
// place: it replaces them (as it already shares desired inventories).
func readStateFile(r io.Reader) (stateFile, error) { return readStateInto(r, nil) }

// readStateInto is readStateFile; given es, it puts the providers there,
// in the file's order (sorted), instead of in f.Providers: LoadState's
// way, with no map of 100,000 entries to copy from.
func readStateInto(r io.Reader, es *entries) (stateFile, error) {
	var f stateFile
	// Duplicate names are refused as json v2 refuses them, but checked
	// here (names) rather than by the tokenizer, which would keep a set of
	// 100,000 uuids to do it.
	dec := jsontext.NewDecoder(r, jsontext.AllowDuplicateNames(true))
	if err := expectKind(dec, '{'); err != nil {
		return f, err
	}
	var names names
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return f, err
		}
		name := tok.String() // a token dies with the next read
		if err := names.add(name); err != nil {
			return f, err
		}
		switch name {
		case "providers":
			f.Providers, err = readProviders(dec, es)
		case "holds":
			err = readInto(dec, &f.Holds)
		case "journal":
			err = readInto(dec, &f.Journal)
		case "gone":
			err = readInto(dec, &f.Gone)
		case "version", "key", "round", "microversion":
			err = readInto(dec, topField(&f, name))
		default:
			err = readInto(dec, new(any)) // still checked, as json v2 does
		}
		if err != nil {
			return f, fmt.Errorf("%s: %w", name, err)
		}
	}
	if err := expectKind(dec, '}'); err != nil {
		return f, err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return f, fmt.Errorf("data after the state: %v", err)
	}
	return f, nil
}

func topField(f *stateFile, name string) any {
	switch name {
	case "version":
		return &f.Version
	case "key":
		return &f.Key
	case "round":
		return &f.Round
	}
	return &f.Microversion
}

// readInto decodes the next value into v with json v2.
func readInto(dec *jsontext.Decoder, v any) error {
	raw, err := dec.ReadValue()
	if err != nil {
		return err
	}
	return jsonv2.Unmarshal(raw, v)
}

func expectKind(dec *jsontext.Decoder, k jsontext.Kind) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() != k {
		return fmt.Errorf("want %v, got %v", k, tok.Kind())
	}
	return nil
}

// shared values of one file, by their exact bytes.
type interned struct {
	inventories map[string]map[string]placement.Inventory
	lists       map[string][]string
	managed     map[string]Managed
	strs        map[string]string
}

func readProviders(dec *jsontext.Decoder, es *entries) (map[string]known, error) {
	if dec.PeekKind() == 'n' {
		_, err := dec.ReadToken()
		return nil, err
	}
	if err := expectKind(dec, '{'); err != nil {
		return nil, err
	}
	in := interned{map[string]map[string]placement.Inventory{}, map[string][]string{}, map[string]Managed{}, map[string]string{}}
	out := map[string]known{}
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		uuid := tok.String()
		if _, dup := out[uuid]; dup || es != nil && es.find(uuid) {
			return nil, fmt.Errorf("duplicate provider %q", cut(uuid))
		}
		k, err := in.known(dec)
		if err != nil {
			return nil, fmt.Errorf("provider %q: %w", cut(uuid), err)
		}
		if es != nil {
			es.put(uuid, k)
		} else {
			out[uuid] = k
		}
	}
	if es != nil {
		out = nil
	}
	return out, expectKind(dec, '}')
}

// known decodes one provider's entry: the fields of known (and of the
// embedded Observed) by their exact names; unknown names are skipped, as
// json v2 does.
func (in *interned) known(dec *jsontext.Decoder) (known, error) {
	var k known
	if dec.PeekKind() == 'n' { // null leaves the zero value, as json v2 does
		_, err := dec.ReadToken()
		return k, err
	}
	if err := expectKind(dec, '{'); err != nil {
		return k, err
	}
	var seen uint16 // the fields read, by knownFields index
	var others names
	for dec.PeekKind() == '"' {
		raw, err := dec.ReadValue()
		if err != nil {
			return k, err
		}
		var name string
		i := slices.IndexFunc(knownFields, func(f string) bool { return len(raw) == len(f)+2 && string(raw[1:len(raw)-1]) == f })
		switch {
		case i >= 0 && seen&(1<<i) != 0:
			return k, fmt.Errorf("duplicate member %q", knownFields[i])
		case i >= 0:
			// A plain name is read without a string per member: ten per
			// provider, a million allocations at 100,000.
			seen |= 1 << i
			name = knownFields[i]
		default: // escaped or unknown: as json v2 reads it
			if name, err = unquote(raw); err != nil {
				return k, err
			}
			if i = slices.Index(knownFields, name); i >= 0 && seen&(1<<i) != 0 {
				return k, fmt.Errorf("duplicate member %q", name)
			} else if i >= 0 {
				seen |= 1 << i
			} else if err := others.add(name); err != nil {
				return k, err
			}
		}
		if raw, err = dec.ReadValue(); err != nil {
			return k, err
		}
		if err := in.field(&k, name, raw); err != nil {
			return k, fmt.Errorf("%s: %w", name, err)
		}
	}
	return k, expectKind(dec, '}')
}

// knownFields are the JSON names of known's fields.
var knownFields = []string{"Exists", "Pending", "Generation", "Inventory", "Traits", "Aggregates", "Retained", "Managed",
	"Plugin", "GoneSince", "ProofRound", "Doubt", "DoubtGeneration", "PausedUntil", "PauseReason"}

func (in *interned) field(k *known, name string, raw jsontext.Value) error {
	var err error
	switch name {
	case "Exists":
		return boolean(raw, &k.Exists)
	case "Pending":
		return boolean(raw, &k.Pending)
	case "Generation":
		if raw.Kind() == 'n' { // json v2's own rule for null
			return decodeInto(raw, &k.Generation)
		}
		return k.Generation.UnmarshalJSON(raw)
	case "Inventory":
		k.Inventory, err = share(in.inventories, raw)
	case "Traits":
		k.Traits, err = share(in.lists, raw)
	case "Aggregates":
		k.Aggregates, err = share(in.lists, raw)
	case "Retained":
		k.Retained, err = share(in.lists, raw)
	case "Managed":
		k.Managed, err = share(in.managed, raw)
	case "Plugin":
		k.Plugin, err = share(in.strs, raw)
	case "GoneSince":
		err = decodeInto(raw, &k.GoneSince)
	case "ProofRound":
		err = decodeInto(raw, &k.ProofRound)
	case "Doubt":
		k.Doubt, err = share(in.strs, raw)
	case "DoubtGeneration":
		err = k.DoubtGeneration.UnmarshalJSON(raw)
	case "PausedUntil":
		err = decodeInto(raw, &k.PausedUntil)
	case "PauseReason":
		err = decodeInto(raw, &k.PauseReason)
	default:
		err = jsonv2.Unmarshal(raw, new(any)) // still checked, as json v2 does
	}
	return err
}

// names are the member names of one object, to refuse a duplicate. Objects
// here have a dozen members at most: a slice beats a map.
type names []string

func (ns *names) add(name string) error {
	if slices.Contains(*ns, name) {
		return fmt.Errorf("duplicate member %q", cut(name))
	}
	*ns = append(*ns, name)
	return nil
}

// boolean decodes true and false without reflection, anything else (an
// error) with json v2 for its message.
func boolean(raw jsontext.Value, b *bool) error {
	switch string(raw) {
	case "true":
		*b = true
		return nil
	case "false":
		*b = false
		return nil
	}
	return decodeInto(raw, b)
}

// decodeInto decodes raw into *p with json v2 through a copy, so that p
// (a field of the entry being read) does not escape: handing &k.x to
// Unmarshal put every entry, and every name, on the heap.
func decodeInto[T any](raw jsontext.Value, p *T) error {
	v := new(T)
	err := jsonv2.Unmarshal(raw, v)
	*p = *v
	return err
}

func unquote(raw jsontext.Value) (string, error) {
	var s string
	return s, decodeInto(raw, &s)
}

// share returns the value decoded from raw, decoding it only the first
// time these bytes are seen. A value that fails to decode is not kept.
func share[T any](seen map[string]T, raw jsontext.Value) (T, error) {
	if v, ok := seen[string(raw)]; ok {
		return v, nil
	}
	var v T
	if err := jsonv2.Unmarshal(raw, &v); err != nil {
		return v, err
	}
	seen[string(raw)] = v
	return v, nil
}
