package wasmhost

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unsafe"

	"github.com/rpengine/rpengine/hostabi"
)

// An answer is decoded as it streams out of the plugin (from its memory
// in process, from the pipe of the plugin host otherwise): the guard
// refuses it at the first byte over a limit, and a listing's records are
// decoded one at a time, each charged to a budget of decoded memory. So
// no answer costs the engine more than the budget, whatever its size.

// listing is the array member of an answer decoded record by record.
type listing struct {
	key string
	// start makes the list empty, not nil, as encoding/json does for [].
	start func()
	// each decodes one record and returns how many strings it holds.
	// bad is the record's fault the guard found (nil: none): the record
	// is kept marked, or left out, never a reason to refuse the answer.
	each func(dec *json.Decoder, lim Limits, bad func() *hostabi.Invalid) (strs int, err error)
}

// stringCost is what each decoded string costs beyond its bytes: its
// header, and the slice slot that holds it.
const stringCost = 32

// decodeAnswer reads one answer from r into out. The members named by
// lists are decoded record by record; the others are decoded into out
// as encoding/json would. Any error is a *limitError or a malformed
// answer; either way nothing of out may be used.
func decodeAnswer(r io.Reader, lim Limits, budget int64, out any, lists ...listing) error {
	keys := make([]string, len(lists))
	for i, l := range lists {
		keys[i] = l.key
	}
	g := newGuard(r, lim, keys...)
	dec := json.NewDecoder(g)
	if err := expectDelim(dec, '{'); err != nil {
		return err
	}
	var cost int64
	var rest []byte // the other members in their order, repeats too, as encoding/json reads them
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := t.(string)
		l := find(lists, key)
		if l == nil {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return err
			}
			cost += int64(len(raw))
			rest = appendMember(rest, key, raw)
			continue
		}
		if seen[l.key] {
			return fmt.Errorf("member %q appears twice", l.key)
		}
		seen[l.key] = true
		if err := decodeList(dec, g, *l, budget, &cost); err != nil {
			return err
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("data after the answer")
	}
	if len(rest) == 0 {
		return nil
	}
	return json.Unmarshal(append(rest, '}'), out)
}

// appendMember appends "key":raw to the object being built in b.
func appendMember(b []byte, key string, raw json.RawMessage) []byte {
	if len(b) == 0 {
		b = append(b, '{')
	} else {
		b = append(b, ',')
	}
	k, _ := json.Marshal(key)
	b = append(append(b, k...), ':')
	return append(b, raw...)
}

func decodeList(dec *json.Decoder, g *guard, l listing, budget int64, cost *int64) error {
	t, err := dec.Token()
	if err != nil || t == nil { // null: no records
		return err
	}
	if d, ok := t.(json.Delim); !ok || d != '[' {
		return fmt.Errorf("%q is not an array", l.key)
	}
	l.start()
	for i := 0; dec.More(); i++ {
		before := dec.InputOffset()
		strs, err := l.each(dec, g.lim, func() *hostabi.Invalid { return g.take(l.key, i) })
		if err != nil {
			return err
		}
		*cost += dec.InputOffset() - before + int64(strs)*stringCost + recordCost
		if *cost > budget {
			return &limitError{fmt.Sprintf("answer refused: its records would take more than %d MiB decoded (a quarter of plugin.memory_limit)", budget>>20)}
		}
	}
	return expectDelim(dec, ']')
}

// recordCost is the fixed size of a decoded record, the largest of them.
const recordCost = int64(unsafe.Sizeof(hostabi.Node{}))

func find(lists []listing, key string) *listing {
	for i := range lists {
		if strings.EqualFold(lists[i].key, key) { // as encoding/json matches
			return &lists[i]
		}
	}
	return nil
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := t.(json.Delim); !ok || d != want {
		return fmt.Errorf("expected %q, found %v", want, Printable(fmt.Sprint(t)))
	}
	return nil
}

// answerError is the *Error of an answer that could not be decoded.
func answerError(err error) *Error {
	var le *limitError
	if errors.As(err, &le) {
		return failure(KindBadAnswer, "%s", le.msg)
	}
	return failure(KindBadAnswer, "malformed answer: %s", Printable(err.Error()))
}

// recordError sorts a record's decoding error: a value of the wrong type
// (encoding/json reads on past it) marks the record; any other ends the
// answer.
func recordError(err error, bad *hostabi.Invalid) (*hostabi.Invalid, error) {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return bad, err
	}
	if bad == nil {
		bad = &hostabi.Invalid{Code: hostabi.InvalidValue, Reason: fmt.Sprintf("%s in \"%s\" is not a %s", te.Value, Printable(te.Field), te.Type)}
	}
	return bad, nil
}

// nodeList, instanceList and uuidList decode the listings of the ABI. A
// node over a per-record limit is kept, marked (hostabi.Node.Invalid);
// an instance over one keeps its cut values, which match no node (one of
// the wrong type refuses the answer: it might name any node); a uuid over
// one is left out, so it proves nothing.
func nodeList(out *[]hostabi.Node) listing {
	return listing{"nodes", func() { *out = []hostabi.Node{} }, func(dec *json.Decoder, lim Limits, bad func() *hostabi.Invalid) (int, error) {
		var n hostabi.Node
		var err error
		n.Invalid, err = recordError(dec.Decode(&n), bad())
		if len(n.Resources) > lim.MaxTraits { // "resources" repeated: encoding/json merges the maps
			n.Resources = nil
			if n.Invalid == nil {
				n.Invalid = &hostabi.Invalid{Code: hostabi.InvalidTooManyEntries, Reason: fmt.Sprintf("its \"resources\", given more than once, hold more than %d entries (plugin.max_traits)", lim.MaxTraits)}
			}
		}
		*out = append(*out, n)
		return 12 + len(n.Traits) + 2*len(n.Resources), err
	}}
}

func instanceList(out *[]hostabi.Instance) listing {
	return listing{"instances", func() { *out = []hostabi.Instance{} }, func(dec *json.Decoder, _ Limits, bad func() *hostabi.Invalid) (int, error) {
		var in hostabi.Instance
		err := dec.Decode(&in) // a value it cannot read might be the node it occupies
		bad()
		*out = append(*out, in)
		return 2, err
	}}
}

func uuidList(key string, out *[]string) listing {
	return listing{key, func() { *out = []string{} }, func(dec *json.Decoder, _ Limits, bad func() *hostabi.Invalid) (int, error) {
		var u string
		b, err := recordError(dec.Decode(&u), bad())
		if b == nil {
			*out = append(*out, u)
		}
		return 1, err
	}}
}
