package wasmhost

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/projection"
)

// Each string is a copy of its bytes, whatever is written to them later,
// and a value longer than a slab gets an allocation of its own.
func TestStringSlabCopies(t *testing.T) {
	var s stringSlab
	src := []byte("0d6f3c52-8f5a-4b0e-9b1a-000000000001")
	var got []string
	for i := range 500 { // many slabs
		got = append(got, s.string(src[:1+i%len(src)]))
	}
	long := bytes.Repeat([]byte("n"), 3*slabBytes)
	big := s.string(long)
	for i := range src {
		src[i] = 'X'
	}
	long[0] = 'X'
	for i, g := range got {
		if want := "0d6f3c52-8f5a-4b0e-9b1a-000000000001"[:1+i%36]; g != want {
			t.Fatalf("string %d is %q, want %q", i, g, want)
		}
	}
	if big != strings.Repeat("n", 3*slabBytes) || s.string(nil) != "" {
		t.Fatal("a long or empty value was not copied as is")
	}
}

// The nodes built from kept frames hold none of the frames' bytes: the
// frames are overwritten after the answer is decoded, and every node
// still reads as before.
func TestRefNodesOutliveTheirFrames(t *testing.T) {
	nodes := sampleNodes(3000)
	var frames [][]byte
	k := newKeptFrames(1 << 30)
	var refs hostabi.NodeRefs
	refs.Fields = refFields
	for p := range 3 {
		page := nodes[p*1000 : (p+1)*1000]
		for i := range page {
			page[i].Resources = nil // not a projected field
		}
		body, _ := json.Marshal(map[string]any{"nodes": page})
		frame, err := projection.HostProjectLimited(body, refPage, projection.Limits{MaxBytes: 1 << 30, Headroom: headRoom})
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, frame)
		ref := k.add(frame[headRoom:], refPage)
		for i := range page {
			refs.Add(ref, uint32(i))
		}
	}
	got, err := readRefs(hostabi.AppendNodeRefs(nil, refs), Limits{}, 1<<30, k)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range frames {
		for i := headRoom + 28; i < len(f); i++ { // past the frame's header: its values
			f[i] = 'X'
		}
	}
	for i := range got {
		if got[i].Traits == nil {
			got[i].Traits = nil
		}
		if !reflect.DeepEqual(got[i], nodes[i]) {
			t.Fatalf("node %d after its frame was overwritten: %+v, want %+v", i, got[i], nodes[i])
		}
	}
}
