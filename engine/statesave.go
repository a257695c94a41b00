package engine

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
)

// encodeState writes f as json.Marshal would, byte for byte, but one
// provider at a time: marshalling 100,000 providers whole held a 36 MB
// buffer grown by doubling (56 MB) and 22 MB of sorted map keys, and
// json's pool then kept that buffer alive for every later Marshal of the
// process (the request bodies), a third of a cold cycle's heap.
func encodeState(w io.Writer, f stateFile) error {
	return encodeWith(w, f, func(e *stateEncoder) { e.providers(f.Providers) })
}

// encodeEntries is encodeState with the providers of es.
func encodeEntries(w io.Writer, f stateFile, es *entries) error {
	return encodeWith(w, f, func(e *stateEncoder) { e.entries(es) })
}

func encodeWith(w io.Writer, f stateFile, providers func(*stateEncoder)) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	e := &stateEncoder{w: bw}
	e.raw(`{"version":`)
	e.value(f.Version)
	e.raw(`,"key":`)
	e.value(f.Key)
	e.raw(`,"round":`)
	e.value(f.Round)
	e.raw(`,"providers":`)
	providers(e)
	if f.Microversion != "" {
		e.raw(`,"microversion":`)
		e.value(f.Microversion)
	}
	if len(f.Holds) > 0 {
		e.raw(`,"holds":`)
		e.value(f.Holds)
	}
	if f.Journal != 0 {
		e.raw(`,"journal":`)
		e.value(f.Journal)
	}
	if len(f.Gone) > 0 {
		e.raw(`,"gone":`)
		e.value(f.Gone)
	}
	e.raw("}")
	if e.err != nil {
		return e.err
	}
	return bw.Flush()
}

// stateEncoder remembers the first error, so encodeState reads straight.
type stateEncoder struct {
	w   *bufio.Writer
	buf bytes.Buffer
	enc *json.Encoder
	err error
}

func (e *stateEncoder) raw(s string) {
	if e.err == nil {
		_, e.err = e.w.WriteString(s)
	}
}

// value writes v as json.Marshal does (HTML-safe), through one reused
// buffer: Encoder.Encode's trailing newline is left out.
func (e *stateEncoder) value(v any) {
	if e.err != nil {
		return
	}
	if e.enc == nil {
		e.enc = json.NewEncoder(&e.buf)
	}
	e.buf.Reset()
	if e.err = e.enc.Encode(v); e.err == nil {
		_, e.err = e.w.Write(bytes.TrimSuffix(e.buf.Bytes(), []byte("\n")))
	}
}

// providers writes the map in json.Marshal's order (keys sorted), as
// Save writes the state's entries.
func (e *stateEncoder) providers(m map[string]known) {
	if m == nil {
		e.raw("null")
		return
	}
	es := newEntries()
	for u, k := range m {
		es.put(u, k)
	}
	e.entries(&es)
}

// entries writes es as json.Marshal writes a map of them (keys sorted).
func (e *stateEncoder) entries(es *entries) {
	e.raw("{")
	for i, u := range es.sorted() {
		if i > 0 {
			e.raw(",")
		}
		k, _ := es.get(u)
		e.value(u)
		e.raw(":")
		e.value(k)
	}
	e.raw("}")
}
