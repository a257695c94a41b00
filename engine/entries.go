package engine

import (
	"iter"
	"maps"
	"slices"
)

// entries are the state's providers, kept in one slice with a uuid →
// slot index. A whole cycle finds each desired provider at the slot the
// last cycle found it (State.slotOf): an idle cycle at 100,000 providers
// then hashes no uuid to find its entry, and reads the entries in the
// order they lie, which is uuid order (a loaded file's, sorted; a first
// cycle's, the desired providers'). A map of the entries themselves cost
// a hash, a key compare and a pointer chase per provider (the entry is
// over the 128 bytes a map keeps in its slot): half of intend.
type entries struct {
	index map[string]int32
	slots []slot
	free  []int32 // removed entries' slots, reused
	// changed, while tracked, is what a journal line must carry
	// (statejournal.go).
	changed changes
}

// slot is one provider's entry, or a free one (live false: a uuid may
// be "" in a file).
type slot struct {
	uuid string
	live bool
	k    known
}

func newEntries() entries { return entries{index: map[string]int32{}} }

func (e *entries) len() int { return len(e.index) }

// find says whether uuid has an entry.
func (e *entries) find(uuid string) bool {
	_, ok := e.index[uuid]
	return ok
}

func (e *entries) get(uuid string) (known, bool) {
	if i, ok := e.index[uuid]; ok {
		return e.slots[i].k, true
	}
	return known{}, false
}

// at is the slot of uuid, trying hint first (-1 if uuid has none).
func (e *entries) at(hint int32, uuid string) int32 {
	if hint >= 0 && int(hint) < len(e.slots) && e.slots[hint].live && e.slots[hint].uuid == uuid {
		return hint
	}
	if i, ok := e.index[uuid]; ok {
		return i
	}
	return -1
}

// put sets uuid's entry to k and returns its slot.
func (e *entries) put(uuid string, k known) int32 {
	e.changed.note(uuid)
	if i, ok := e.index[uuid]; ok {
		e.slots[i].k = k
		return i
	}
	i := int32(len(e.slots))
	if n := len(e.free); n > 0 {
		i, e.free = e.free[n-1], e.free[:n-1]
		e.slots[i] = slot{uuid, true, k}
	} else {
		e.slots = append(e.slots, slot{uuid, true, k})
	}
	e.index[uuid] = i
	return i
}

// putAt is put for uuid, found at slot j already (-1: not found).
func (e *entries) putAt(j int32, uuid string, k known) int32 {
	if j < 0 {
		return e.put(uuid, k)
	}
	e.slots[j].k = k
	e.changed.note(uuid)
	return j
}

// reserve makes room for n entries in all, in one piece: a first cycle
// adds every provider, and appending them one by one would copy the
// slots a dozen times and leave a quarter of them spare.
func (e *entries) reserve(n int) {
	if n > cap(e.slots) {
		e.slots = slices.Grow(e.slots, n-len(e.slots))
	}
}

// remove forgets uuid's entry; its slot is cleared, so no stale hint
// finds it, and keeps no strings alive. Once most slots are free the
// live ones are moved together: a fleet cut from 100,000 providers to a
// few must not keep 26 MB of empty slots.
func (e *entries) remove(uuid string) {
	e.changed.note(uuid)
	if i, ok := e.index[uuid]; ok {
		delete(e.index, uuid)
		e.slots[i] = slot{}
		e.free = append(e.free, i)
	}
	if len(e.free) > 64 && len(e.free) > len(e.slots)/2 {
		e.compact()
	}
}

// compact moves the live slots together, in their order, into a new
// slice (so the old one is freed); hints to the old places then miss,
// and intend asks the index.
func (e *entries) compact() {
	live := make([]slot, 0, len(e.index))
	for _, s := range e.slots {
		if s.live {
			e.index[s.uuid] = int32(len(live))
			live = append(live, s)
		}
	}
	e.slots, e.free = live, nil
}

// all yields every entry, in slot order.
func (e *entries) all() iter.Seq2[string, known] {
	return func(yield func(string, known) bool) {
		for i := range e.slots {
			if s := &e.slots[i]; s.live && !yield(s.uuid, s.k) {
				return
			}
		}
	}
}

// sorted is every uuid, sorted.
func (e *entries) sorted() []string { return slices.Sorted(maps.Keys(e.index)) }

// clone copies the entries; their values share slices and maps, which
// the engine replaces, never modifies.
func (e *entries) clone() entries {
	return entries{index: maps.Clone(e.index), slots: slices.Clone(e.slots), free: slices.Clone(e.free)}
}
