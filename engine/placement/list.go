package placement

import (
	"fmt"
	"io"
)

// providerList decodes GET /resource_providers by scanning its bytes
// (scan.go) and keeping only uuid, name, generation and parent. The answer
// carries six links per provider; at 10,000 providers reflection-based
// decoding of it was 80% of an idle cycle's CPU (BenchmarkDecodeProviders).
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

// add stores p; one probe, not a lookup and then an insert: a uuid
// listed twice fails the whole listing, so its overwritten value is moot.
func (m generationMap) add(p Provider) error {
	n := len(m)
	if m[p.UUID] = p.Generation; len(m) == n {
		return fmt.Errorf("provider %s listed twice", p.UUID)
	}
	return nil
}

// decodeProviders calls each for every provider of a listing; names are
// read only when wanted (scan.go).
func decodeProviders(r io.Reader, names bool, each func(Provider) error) error {
	return newScanner(r).listing(names, each)
}

// generations shares the string of each generation a listing repeats:
// most providers of a fleet sit at a few generations, and a string each
// was 100,000 allocations per idle cycle at 100,000 providers. Once the
// table is full and the generations go on coming mostly new (an opaque
// value per provider, as the fake Placement sends), it stops looking them
// up: a probe each saved nothing. Either way each is the bytes listed.
type generations struct {
	shared       map[string]Generation // nil: not looked up any more
	hits, misses int                   // misses: new ones once the table is full
	strs         *arena                // where new ones are copied; nil: a string each
}

const maxShared = 4096 // distinct generations shared per listing

func newGenerations() *generations { return &generations{shared: map[string]Generation{}} }

func (g *generations) of(v []byte) Generation {
	if g.shared == nil {
		return g.copy(v)
	}
	if s, ok := g.shared[string(v)]; ok {
		g.hits++
		return s
	}
	s := g.copy(v)
	if len(g.shared) < maxShared {
		g.shared[string(s)] = s
	} else if g.misses++; g.misses > maxShared && g.hits < g.misses {
		g.shared = nil
	}
	return s
}

func (g *generations) copy(v []byte) Generation {
	if g.strs == nil {
		return Generation(v)
	}
	return Generation(g.strs.string(v))
}
