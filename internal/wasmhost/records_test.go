package wasmhost

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
)

// sampleNodes are nodes shaped like an Ironic listing's, with every field
// the encoding carries set somewhere.
func sampleNodes(n int) []hostabi.Node {
	out := make([]hostabi.Node, n)
	for i := range out {
		out[i] = hostabi.Node{
			UUID: fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i*7), Name: fmt.Sprintf("node-%05d", i),
			ResourceClass: "baremetal-gold", PowerState: "power on", ProvisionState: "active",
			ConductorGroup: "cg1", Shard: "s1", Traits: []string{"CUSTOM_GPU", "HW_CPU_X86_AVX2"},
		}
		switch i % 4 {
		case 1:
			out[i].InstanceUUID = fmt.Sprintf("%08x-1111-4000-8000-%012x", i, i)
			out[i].Maintenance, out[i].Fault = true, "power failure"
		case 2:
			out[i].Resources = map[string]hostabi.Resource{"VCPU": {Total: 64, Reserved: -1, MaxUnit: 8, AllocationRatio: 4.5},
				"MEMORY_MB": {Total: 1 << 40, StepSize: 256}}
			out[i].Retired, out[i].TargetProvisionState, out[i].Traits = true, "deleted", nil
		}
	}
	return out
}

func encodeNodes(t testing.TB, nodes []hostabi.Node) []byte {
	b, ok := hostabi.AppendNodeRecords(nil, nodes)
	if !ok {
		t.Fatal("AppendNodeRecords refused")
	}
	return b
}

func readNodes(b []byte, lim Limits, budget int64) ([]hostabi.Node, error) {
	return decodeNodeRecords(bufio.NewReaderSize(bytes.NewReader(b), 64<<10), lim, budget)
}

// A listing decodes from binary records to exactly what its JSON decodes
// to, through the same entry point the host uses for both.
func TestRecordsDecodeAsJSONDoes(t *testing.T) {
	nodes := sampleNodes(9)
	got, err := readNodes(encodeNodes(t, nodes), Limits{}, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(hostabi.ListNodesResponse{Nodes: nodes, Complete: true})
	want, err := decodeNodes(string(raw), Limits{}, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want.Nodes) {
		t.Fatalf("binary %+v\njson %+v", got, want.Nodes)
	}
	inst := []hostabi.Instance{{UUID: "a", NodeUUID: "b"}, {UUID: "c", NodeUUID: "d"}}
	b := hostabi.AppendInstanceRecords(nil, inst)
	gotInst, err := decodeInstanceRecords(bufio.NewReader(bytes.NewReader(b)), Limits{}, 1<<30)
	if err != nil || !reflect.DeepEqual(gotInst, inst) {
		t.Fatalf("instances %+v, %v", gotInst, err)
	}
}

// Every way a binary answer can be wrong is refused with a message that
// names what was wrong, and, for a limit, the limit.
func TestRecordsRefuseBadAnswers(t *testing.T) {
	lim := Limits{MaxRecords: 3, MaxField: 16, MaxTraits: 2}
	good := encodeNodes(t, []hostabi.Node{{UUID: "u1"}, {UUID: "u2"}})
	// node builds one record by hand: strings, then flags, traits, resources.
	node := func(strs []string, rest ...byte) []byte {
		b := append([]byte(hostabi.RecordsMagic), hostabi.RecordsNodes, 1)
		for i := range 10 {
			s := ""
			if i < len(strs) {
				s = strs[i]
			}
			b = append(binary.AppendUvarint(b, uint64(len(s))), s...)
		}
		return append(b, rest...)
	}
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"at the limits", node([]string{"u", strings.Repeat("n", 16)}, 0, 2, 1, 'a', 1, 'b', 0), ""},
		{"no magic", []byte("RPB2N\x00"), "does not start with RPB1"},
		{"instances where nodes are due", []byte("RPB1I\x00"), `holds records of kind 'I', want 'N'`},
		{"too many records", []byte("RPB1N\x04"), "holds 4 records, more than 3 (plugin.max_records)"},
		{"count over the budget", []byte("RPB1N\x03"), "would take more than 0 MiB decoded"},
		{"truncated", good[:len(good)-2], `node 1: the answer ends inside`},
		{"trailing data", append(bytes.Clone(good), 0), "data after the last record"},
		{"overlong varint", node([]string{"u"}, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01), `"traits" is malformed`},
		{"too many traits, cut short", node([]string{"u"}, 0, 3, 1, 'a', 1, 'b'), `node 0: the answer ends inside "traits"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			budget := int64(1 << 30)
			if strings.Contains(c.name, "budget") {
				budget = 1
			}
			_, err := readNodes(c.b, lim, budget)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}

// A per-node fault marks that node with a code and a reason, the reader
// skips the rest of its value unread, and the nodes after it decode whole.
func TestRecordsMarkTheNodeOverAPerNodeLimit(t *testing.T) {
	lim := Limits{MaxRecords: 3, MaxField: 16, MaxTraits: 2}
	next := encodeNodes(t, []hostabi.Node{{UUID: "v", ResourceClass: "gold"}})[6:] // its record
	node := func(strs []string, rest ...byte) []byte {
		b := append([]byte(hostabi.RecordsMagic), hostabi.RecordsNodes, 2)
		for i := range 10 {
			s := ""
			if i < len(strs) {
				s = strs[i]
			}
			b = append(binary.AppendUvarint(b, uint64(len(s))), s...)
		}
		return append(append(b, rest...), next...)
	}
	res := func(name string, ratio float64) []byte {
		return binary.LittleEndian.AppendUint64(append([]byte{byte(len(name))}, append([]byte(name), 2, 0, 0, 0, 0)...), math.Float64bits(ratio))
	}
	for _, c := range []struct {
		name, code, reason string
		b                  []byte
	}{
		{"long string", hostabi.InvalidFieldTooLong, `a string in "name" is 17 bytes, more than 16 (plugin.max_field_length), starting "nnnn`,
			node([]string{"u", strings.Repeat("n", 17)}, 0, 0, 0)},
		{"giant string", hostabi.InvalidFieldTooLong, `"fault" is 1048576 bytes`,
			node([]string{"u", "", "", "", "", "", "", strings.Repeat("f", 1<<20)}, 0, 0, 0)},
		{"bad UTF-8", hostabi.InvalidUTF8, `a string in "name" is not valid UTF-8`, node([]string{"u", "a\xffb"}, 0, 0, 0)},
		{"unknown flag", hostabi.InvalidValue, "flags 0x04 has unknown bits set", node([]string{"u"}, 4, 0, 0)},
		{"too many traits", hostabi.InvalidTooManyEntries, `its "traits" holds 3 entries, more than 2 (plugin.max_traits)`,
			node([]string{"u"}, 0, 3, 1, 'a', 1, 'b', 20, 'c', 'c', 'c', 'c', 'c', 'c', 'c', 'c', 'c', 'c', 'c', 'c', 'c', 'c', 'c', 'c', 'c', 'c', 'c', 'c', 0)},
		{"too many resources", hostabi.InvalidTooManyEntries, `its "resources" holds 3 entries`,
			node([]string{"u"}, slices.Concat([]byte{0, 0, 3}, res("A", 1), res("B", 1), res("C", 1))...)},
		{"resource twice", hostabi.InvalidValue, `resource "R" appears twice`, node([]string{"u"}, slices.Concat([]byte{0, 0, 2}, res("R", 1), res("R", 1))...)},
		{"ratio not a number", hostabi.InvalidValue, `allocation_ratio NaN, not a finite number`, node([]string{"u"}, slices.Concat([]byte{0, 0, 1}, res("R", math.NaN()))...)},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := readNodes(c.b, lim, 1<<30)
			if err != nil {
				t.Fatal(err)
			}
			if bad := got[0].Invalid; bad == nil || bad.Code != c.code || !strings.Contains(bad.Reason, c.reason) {
				t.Fatalf("marked %+v, want %s %q", bad, c.code, c.reason)
			}
			if len(got[0].Traits) > 2 || len(got[0].Name) > 16 || len(got[0].Fault) > 16 {
				t.Fatalf("kept more than the limits: %+v", got[0])
			}
			if len(got) != 2 || got[1].Invalid != nil || got[1].UUID != "v" || got[1].ResourceClass != "gold" {
				t.Fatalf("the next node: %+v", got[1:])
			}
		})
	}
}

// A fault both encodings can carry marks the same node with the same code
// in rpb1 as in JSON (bytes that are not UTF-8 still become U+FFFD, one
// for each, as encoding/json makes them).
func TestRecordsMarkAsJSONDoes(t *testing.T) {
	nodes := sampleNodes(4)
	nodes[1].Name = "bad \xff\xfe name"
	nodes[2].ResourceClass = strings.Repeat("é", 128)
	nodes[3].Traits = slices.Repeat([]string{"T"}, DefaultMaxTraits+1)
	got, err := readNodes(encodeNodes(t, nodes), Limits{}, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(hostabi.ListNodesResponse{Nodes: nodes, Complete: true})
	raw = bytes.ReplaceAll(raw, []byte(`\ufffd\ufffd`), []byte("\xff\xfe")) // as a Python encoder might send them
	want, err := decodeNodes(string(raw), Limits{}, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	for i := range nodes {
		g, w := got[i].Invalid, want.Nodes[i].Invalid
		if (g == nil) != (i == 0) || (w == nil) != (i == 0) || g != nil && g.Code != w.Code {
			t.Fatalf("node %d: rpb1 marked %+v, JSON %+v", i, g, w)
		}
	}
	if got[1].Name != want.Nodes[1].Name || got[1].Name != "bad \ufffd\ufffd name" {
		t.Fatalf("rpb1 %q, JSON %q", got[1].Name, want.Nodes[1].Name)
	}
}

// The budget is charged record by record, as for JSON.
func TestRecordsChargeTheBudget(t *testing.T) {
	b := encodeNodes(t, sampleNodes(100))
	if _, err := readNodes(b, Limits{}, 100*recordCost+1); err == nil || !strings.Contains(err.Error(), "plugin.memory_limit") {
		t.Fatalf("err = %v", err)
	}
	if _, err := readNodes(b, Limits{}, 100*(recordCost+1024)); err != nil {
		t.Fatal(err)
	}
}

// A ratio JSON cannot say (encoding/json refuses it) is refused, so the
// SDK answers in JSON, which fails as before.
func TestRecordsEncoderRefusesNonFiniteRatios(t *testing.T) {
	n := hostabi.Node{UUID: "u", Resources: map[string]hostabi.Resource{"VCPU": {Total: 1, AllocationRatio: math.Inf(1)}}}
	if _, ok := hostabi.AppendNodeRecords(nil, []hostabi.Node{n}); ok {
		t.Errorf("%+v encoded", n)
	}
}

// FuzzNodeRecords feeds the host's decoder arbitrary bytes: it never
// panics, never returns more than the limits allow, and what it accepts
// the SDK's encoder writes back to bytes that decode to the same nodes.
func FuzzNodeRecords(f *testing.F) {
	f.Add(encodeNodes(f, sampleNodes(5)))
	f.Add(encodeNodes(f, nil))
	f.Add([]byte("RPB1N\x01\x01u"))
	lim := Limits{MaxRecords: 50, MaxField: 64, MaxTraits: 8}
	f.Fuzz(func(t *testing.T, b []byte) {
		nodes, err := readNodes(b, lim, 1<<20)
		if err != nil {
			return
		}
		if len(nodes) > lim.MaxRecords {
			t.Fatalf("%d records", len(nodes))
		}
		for i, n := range nodes {
			if len(n.Traits) > lim.MaxTraits || len(n.Resources) > lim.MaxTraits || len(n.UUID) > lim.MaxField {
				t.Fatalf("over the limits: %+v", n)
			}
			if n.Invalid != nil { // cut: it need not encode back to itself
				nodes[i] = hostabi.Node{UUID: "x"}
			}
		}
		again, ok := hostabi.AppendNodeRecords(nil, nodes)
		if !ok {
			t.Fatalf("accepted %q, cannot encode it back", b)
		}
		if back, err := readNodes(again, lim, 1<<20); err != nil || !reflect.DeepEqual(back, nodes) {
			t.Fatalf("accepted %q, its encoding %q decodes to %+v, %v", b, again, back, err)
		}
	})
}

// BenchmarkRecords10k is the ABI's own cost for a 10,000-node listing,
// natively: the SDK's encoding and the host's decoding, binary records
// against JSON (the SDK's JSON encoder, the host's streaming decoder).
func BenchmarkRecords10k(b *testing.B) {
	nodes := sampleNodes(10000)
	bin := encodeNodes(b, nodes)
	js, _ := json.Marshal(hostabi.ListNodesResponse{Nodes: nodes, Complete: true})
	b.Run("rpb1/encode", func(b *testing.B) {
		b.SetBytes(int64(len(bin)))
		for b.Loop() {
			hostabi.AppendNodeRecords(make([]byte, 0, hostabi.NodeRecordsSize(nodes)), nodes)
		}
	})
	b.Run("rpb1/decode", func(b *testing.B) {
		b.SetBytes(int64(len(bin)))
		for b.Loop() {
			if _, err := readNodes(bin, Limits{}, 1<<30); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json/encode", func(b *testing.B) {
		b.SetBytes(int64(len(js)))
		for b.Loop() {
			json.Marshal(hostabi.ListNodesResponse{Nodes: nodes, Complete: true})
		}
	})
	b.Run("json/decode", func(b *testing.B) {
		b.SetBytes(int64(len(js)))
		for b.Loop() {
			if _, err := decodeNodes(string(js), Limits{}, 1<<30); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// Limits an operator raised past the reader's 64 KB buffer still work:
// the window grows to the largest record they allow.
func TestRecordsUnderLargeLimits(t *testing.T) {
	nodes := []hostabi.Node{{UUID: "u", Name: strings.Repeat("n", 100_000)}, {UUID: "v"}}
	got, err := readNodes(encodeNodes(t, nodes), Limits{MaxField: 200_000}, 1<<30)
	if err != nil || !reflect.DeepEqual(got, nodes) {
		t.Fatalf("%d nodes, %v", len(got), err)
	}
}
