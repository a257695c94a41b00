package wasmhost

import (
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/rpengine/rpengine/hostabi"
)

func decodeNodes(doc string, lim Limits, budget int64) (hostabi.ListNodesResponse, error) {
	var out hostabi.ListNodesResponse
	err := decodeAnswer(strings.NewReader(doc), lim, budget, &out, nodeList(&out.Nodes))
	return out, err
}

// Each whole-answer limit refuses an answer over it with one short message
// naming the limit and the member, and accepts an answer at it.
func TestAnswerLimits(t *testing.T) {
	lim := Limits{MaxRecords: 3, MaxField: 16, MaxTraits: 2}
	node := func(extra string) string { return `{"uuid":"u"` + extra + `}` }
	list := func(nodes ...string) string {
		return `{"nodes":[` + strings.Join(nodes, ",") + `],"complete":true}`
	}
	for _, c := range []struct {
		name, doc, want string
	}{
		{"records at the limit", list(node(""), node(""), node("")), ""},
		{"records over", list(node(""), node(""), node(""), node("")), `"nodes" holds more than 3 records (plugin.max_records)`},
		{"field at the limit", list(node(`,"resource_class":"1234567890123456"`)), ""},
		{"traits at the limit", list(node(`,"traits":["A","B"]`)), ""},
		{"answer's string over", `{"error":"` + strings.Repeat("e", maxMessage+1) + `"}`, "longer than 4096 bytes"},
		{"too deep", `{"nodes":[{"resources":{"A":{"total":[[1]]}}}]}`, "nested deeper than 5 levels"},
		{"malformed", `{"nodes":[{"uuid":}]}`, "'}' where a value belongs"},
		// What the guard leaves out is checked too: the decoder never sees it.
		{"malformed in a cut number", list(node(`,"x":{"y":12345678901234567A}`)), "'A' after a value"},
		{"malformed in skipped entries", list(node(`,"traits":["A","B","C",x]`)), "'x' where a value belongs"},
		{"malformed in a cut string", list(node(`,"resource_class":"12345678901234567\q"`)), "invalid escape \\q"},
		{"cut number ends badly", list(node(`,"x":12345678901234567e}`)), "a number ends with '}'"},
		{"ends inside a value", `{"nodes":[{"uuid":"u"`, "inside a value"},
		{"trailing data", list() + `{}`, "data after the answer"},
		{"nodes twice", `{"nodes":[],"nodes":[]}`, `member "nodes" appears twice`},
		{"nodes not an array", `{"nodes":{}}`, `"nodes" is not an array`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := decodeNodes(c.doc, lim, 1<<20)
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
			if err != nil && len(err.Error()) > 300 {
				t.Fatalf("error of %d bytes", len(err.Error()))
			}
			for _, n := range got.Nodes {
				if err == nil && n.Invalid != nil {
					t.Fatalf("node marked %+v", n.Invalid)
				}
			}
		})
	}
}

// A per-node limit marks that node alone, with a code and a reason, and
// the decoder reads on: the ordinary nodes around it decode whole.
func TestAnswerPerNodeLimitsMarkTheNode(t *testing.T) {
	lim := Limits{MaxRecords: 3, MaxField: 16, MaxTraits: 2}
	ok := `{"uuid":"ok","resource_class":"gold","traits":["A"]}`
	for _, c := range []struct {
		name, node, code, reason string
	}{
		{"field over", `"resource_class":"12345678901234567"`, hostabi.InvalidFieldTooLong, `a string in "resource_class" is longer than 16 bytes (plugin.max_field_length), starting "1234`},
		{"escaped over", `"name":"` + strings.Repeat(`\u00e9`, 9) + `"`, hostabi.InvalidFieldTooLong, `in "name" is longer than 16 bytes`},
		{"trait over", `"traits":["CUSTOM_LONGER_NAME"]`, hostabi.InvalidFieldTooLong, `a string in "traits" is longer than 16 bytes`},
		{"traits over", `"traits":["A","B","C",["nested",{"x":"]"}],"D"]`, hostabi.InvalidTooManyEntries, `its "traits" holds more than 2 entries (plugin.max_traits)`},
		{"resources over", `"resources":{"A":{"total":1},"B":{"total":1},"C":{"total":1}}`, hostabi.InvalidTooManyEntries, `"resources" holds more than 2 entries`},
		{"resources repeated", `"resources":{"A":{"total":1},"B":{"total":1}},"Resources":{"C":{"total":1}}`, hostabi.InvalidTooManyEntries, `"resources", given more than once, hold more than 2 entries`},
		{"number over", `"resources":{"A":{"total":12345678901234567e1}}`, hostabi.InvalidFieldTooLong, `a number in "total" is longer than 16 bytes`},
		{"number over after a dot", `"resources":{"A":{"total":1.23456789012345e10}}`, hostabi.InvalidFieldTooLong, `a number in "total"`},
		{"bad UTF-8", "\"name\":\"a\xffb\"", hostabi.InvalidUTF8, `a string in "name" is not valid UTF-8`},
		{"cut UTF-8", "\"name\":\"a\xc3\"", hostabi.InvalidUTF8, `not valid UTF-8`},
		{"lone surrogate", `"name":"a\ud800b"`, hostabi.InvalidUTF8, `not valid UTF-8`},
		{"wrong type", `"traits":"A"`, hostabi.InvalidValue, `string in "traits" is not a []string`},
		{"too many members", strings.Repeat(`"x":1,`, maxMembers) + `"y":2`, hostabi.InvalidTooManyEntries, "more than 64 members"},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := `{"nodes":[` + ok + `,{"uuid":"bad",` + c.node + `},` + ok + `],"complete":true}`
			got, err := decodeNodes(doc, lim, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Nodes) != 3 || !got.Complete {
				t.Fatalf("%+v", got)
			}
			bad := got.Nodes[1].Invalid
			if bad == nil || bad.Code != c.code || !strings.Contains(bad.Reason, c.reason) {
				t.Fatalf("node 1 marked %+v, want %s %q", bad, c.code, c.reason)
			}
			for _, i := range []int{0, 2} {
				if n := got.Nodes[i]; n.Invalid != nil || n.ResourceClass != "gold" || len(n.Traits) != 1 {
					t.Fatalf("node %d: %+v", i, n)
				}
			}
		})
	}
}

// The listing's key matches as encoding/json matches it, in any case and
// by Unicode folding ("ſ" is "s"): a record cut in "NODEſ" is marked, as
// in "nodes", never passed on cut and unmarked.
func TestAnswerListingKeyFoldedMarksItsRecords(t *testing.T) {
	for _, key := range []string{"nodes", "NODES", "NODEſ"} {
		got, err := decodeNodes(`{"`+key+`":[{"uuid":"`+strings.Repeat("a", 20)+`"}]}`, Limits{MaxField: 16}, 1<<20)
		if err != nil || len(got.Nodes) != 1 || got.Nodes[0].Invalid == nil || got.Nodes[0].Invalid.Code != hostabi.InvalidFieldTooLong {
			t.Errorf("%q: %v, %+v", key, err, got.Nodes)
		}
	}
}

// plugin.max_traits caps a node's traits and resources, not the fields
// of one resource (as in rpb1): under max_traits 2, a resource with all
// six of its fields decodes whole, unmarked.
func TestAnswerResourceFieldsAreNotEntries(t *testing.T) {
	doc := `{"nodes":[{"uuid":"u","resources":{"VCPU":{"total":8,"reserved":1,"min_unit":1,"max_unit":8,"step_size":1,"allocation_ratio":2}}}]}`
	got, err := decodeNodes(doc, Limits{MaxTraits: 2}, 1<<20)
	want := hostabi.Resource{Total: 8, Reserved: 1, MinUnit: 1, MaxUnit: 8, StepSize: 1, AllocationRatio: 2}
	if err != nil || len(got.Nodes) != 1 || got.Nodes[0].Invalid != nil || got.Nodes[0].Resources["VCPU"] != want {
		t.Fatalf("%v, %+v", err, got.Nodes)
	}
}

// The answer's other members decode as encoding/json reads them, in
// their order, repeats too: a null after a value keeps the value, and the
// last of "error" and "Error" wins (CI's fuzz found the first: a map of
// members kept the null alone).
func TestAnswerRepeatedMembersReadAsEncodingJSON(t *testing.T) {
	for _, doc := range []string{`{"error":"0","error":null}`, `{"error":"a","Error":"b"}`, `{"Error":"b","error":"a"}`,
		`{"complete":true,"nodes":[],"complete":false}`} {
		got, err := decodeNodes(doc, Limits{}, 1<<20)
		var want hostabi.ListNodesResponse
		if jerr := json.Unmarshal([]byte(doc), &want); err != nil || jerr != nil || got.Error != want.Error || got.Complete != want.Complete {
			t.Errorf("%s: streamed %+v (%v), encoding/json %+v", doc, got, err, want)
		}
	}
}

// Lengths count the decoded value: 120 é written as \u00e9 (Python's
// default) are 240 bytes, within 255, as they are in rpb1; 128 are not.
func TestAnswerEscapesCountTheirDecodedBytes(t *testing.T) {
	for n, marked := range map[int]bool{120: false, 127: false, 128: true} {
		doc := `{"nodes":[{"uuid":"u","resource_class":"` + strings.Repeat(`\u00e9`, n) + `"},{"uuid":"v","name":"` +
			strings.Repeat(`\u003c`, 255) + `"}],"complete":true}`
		got, err := decodeNodes(doc, Limits{}, 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		if (got.Nodes[0].Invalid != nil) != marked || got.Nodes[1].Invalid != nil {
			t.Fatalf("%d escapes: marked %+v, %+v", n, got.Nodes[0].Invalid, got.Nodes[1].Invalid)
		}
		if !marked && got.Nodes[0].ResourceClass != strings.Repeat("é", n) {
			t.Fatalf("%d escapes: %q", n, got.Nodes[0].ResourceClass)
		}
		bin, _ := hostabi.AppendNodeRecords(nil, []hostabi.Node{{UUID: "u", ResourceClass: strings.Repeat("é", n)}})
		nodes, err := readNodes(bin, Limits{}, 1<<30)
		if err != nil || (nodes[0].Invalid != nil) != marked {
			t.Fatalf("%d in rpb1: %+v, %v", n, nodes, err)
		}
	}
}

// A giant string marks its node after MaxField bytes and the rest is
// left out unread: the node holds a short prefix, its reason a shorter one.
func TestAnswerGiantStringIsCutShort(t *testing.T) {
	doc := `{"nodes":[{"uuid":"u","resource_class":"` + strings.Repeat("x", 10<<20) + `"},{"uuid":"v"}],"complete":true}`
	got, err := decodeNodes(doc, Limits{}, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	n := got.Nodes[0]
	if n.Invalid == nil || len(n.Invalid.Reason) > 300 || !strings.Contains(n.Invalid.Reason, "255 bytes") || len(n.ResourceClass) > 255+4 {
		t.Fatalf("%d bytes kept, marked %+v", len(n.ResourceClass), n.Invalid)
	}
	if len(got.Nodes) != 2 || got.Nodes[1].UUID != "v" {
		t.Fatalf("%+v", got.Nodes)
	}
}

// Broken UTF-8 counts as what encoding/json makes of it, a U+FFFD of 3
// bytes for each of its bytes: a string of them is cut at the limit, and
// the answer's own string refused over its. CI's fuzz found 7 bytes of
// \xec (each a sequence cut short) counted as none. Read one byte at a
// time too, a sequence held back over reads decodes the same.
func TestAnswerBrokenUTF8CountsItsReplacements(t *testing.T) {
	lim := Limits{MaxField: 16}
	for _, bad := range []string{"\xec", "\xe2\x82", "\xf0\x90\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xff"} {
		doc := `{"nodes":[{"uuid":"` + strings.Repeat(bad, 40) + `"},{"uuid":"v","name":"é€"}]}`
		for _, r := range []io.Reader{strings.NewReader(doc), iotest.OneByteReader(strings.NewReader(doc))} {
			var got hostabi.ListNodesResponse
			if err := decodeAnswer(r, lim, 1<<20, &got, nodeList(&got.Nodes)); err != nil {
				t.Fatalf("%q: %v", bad, err)
			}
			n := got.Nodes[0]
			if n.Invalid == nil || len(n.UUID) > 16+3 || len(n.UUID) < 16 || got.Nodes[1].Name != "é€" {
				t.Fatalf("%q: %d bytes kept, marked %+v; then %+v", bad, len(n.UUID), n.Invalid, got.Nodes[1])
			}
		}
	}
	if _, err := decodeNodes(`{"error":"`+strings.Repeat("\xec", maxMessage/3+1)+`"}`, lim, 1<<20); err == nil {
		t.Error("an error of broken UTF-8 decoding to more than 4096 bytes accepted")
	}
}

// The decoded records are charged to the budget, which refuses the
// answer once spent.
func TestAnswerBudget(t *testing.T) {
	doc := `{"nodes":[` + strings.TrimSuffix(strings.Repeat(`{"uuid":"u"},`, 1000), ",") + `],"complete":true}`
	if _, err := decodeNodes(doc, Limits{}, 1<<20); err != nil {
		t.Fatal(err)
	}
	_, err := decodeNodes(doc, Limits{}, 64<<10)
	if err == nil || !strings.Contains(err.Error(), "a quarter of plugin.memory_limit") {
		t.Fatalf("err = %v", err)
	}
}

// Within the limits, the streaming decoder reads what encoding/json reads.
func FuzzDecodeAnswer(f *testing.F) {
	for _, s := range []string{
		`{"nodes":[{"uuid":"a","traits":["X"],"resources":{"VCPU":{"total":4}}}],"complete":true}`,
		`{"error":"down","Nodes":null}`,
		`{"complete":true,"nodes":[],"extra":{"a":[1,2]}}`,
		`{"nodes":[{"uuid":"a\u0041","maintenance":true}]}`,
	} {
		f.Add(s)
	}
	f.Add(`{"nodes":[{"uuid":"a","traits":["A","B"]},{"uuid":"` + strings.Repeat(`\u00e9`, 20) + `"}],"complete":true}`)
	f.Add("{\"nodes\":[{\"uuid\":\"a\xff\",\"resources\":{\"V\":{\"total\":1234567890123456789}}}]}")
	lim := Limits{MaxRecords: 50, MaxField: 16, MaxTraits: 4}
	f.Fuzz(func(t *testing.T, doc string) {
		got, err := decodeNodes(doc, lim, 1<<30)
		if err != nil {
			return
		}
		var want hostabi.ListNodesResponse
		var raw struct{ Nodes []json.RawMessage }
		if err := json.Unmarshal([]byte(doc), &raw); err != nil || len(raw.Nodes) != len(got.Nodes) {
			t.Fatalf("streamed %q (%d nodes), which encoding/json reads as %d: %v", doc, len(got.Nodes), len(raw.Nodes), err)
		}
		marked := false
		for i, n := range got.Nodes {
			if len(n.Traits) > lim.MaxTraits || len(n.Resources) > lim.MaxTraits || len(n.UUID) > lim.MaxField+4 {
				t.Fatalf("%q: over the limits: %+v", doc, n)
			}
			if n.Invalid != nil { // a node over a limit is cut: the others are whole
				marked = true
				continue
			}
			var one hostabi.Node
			if err := json.Unmarshal(raw.Nodes[i], &one); err != nil || !reflect.DeepEqual(n, one) {
				t.Fatalf("%q: node %d streamed %+v, encoding/json %+v (%v)", doc, i, n, one, err)
			}
		}
		if marked {
			return
		}
		if err := json.Unmarshal([]byte(doc), &want); err != nil {
			t.Fatalf("streamed %q, which encoding/json refuses: %v", doc, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: streamed %+v, encoding/json %+v", doc, got, want)
		}
	})
}

// A string the decoder does not see (the rest of one over the field
// limit, or an entry skipped over the entry limit) is still checked: a
// malformed answer is refused whether or not a limit was passed.
func TestAnswerLeftOutStringsAreStillChecked(t *testing.T) {
	lim := Limits{MaxRecords: 50, MaxField: 16, MaxTraits: 2}
	for _, doc := range []string{
		`{"nodes":[{"uuid":"a","name":"00000000000000000\0"}]}`,     // past the field limit
		`{"nodes":[{"uuid":"a","name":"00000000000000000\u12g4"}]}`, // a bad hex digit there
		"{\"nodes\":[{\"uuid\":\"a\",\"name\":\"00000000000000000\x01\"}]}",
		`{"nodes":[{"uuid":"a","traits":["A","B","C\q"]}]}`, // an entry past the entry limit
		`{"nodes":[{"uuid":"a","traits":["A","B","\uZZZZ"]}]}`,
	} {
		if _, err := decodeNodes(doc, lim, 1<<20); err == nil {
			t.Errorf("%q: accepted, want refused as malformed", doc)
		}
	}
	ok := `{"nodes":[{"uuid":"a","name":"00000000000000000\n\u00e9","traits":["A","B","C\"\u0041"]}]}`
	if got, err := decodeNodes(ok, lim, 1<<20); err != nil || len(got.Nodes) != 1 || got.Nodes[0].Invalid == nil {
		t.Errorf("valid escapes past the limits: %v, %+v; want one node, marked", err, got.Nodes)
	}
}
