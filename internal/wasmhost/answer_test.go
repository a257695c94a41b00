package wasmhost

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
)

func decodeNodes(doc string, lim Limits, budget int64) (hostabi.ListNodesResponse, error) {
	var out hostabi.ListNodesResponse
	err := decodeAnswer(strings.NewReader(doc), lim, budget, &out, nodeList(&out.Nodes))
	return out, err
}

// Each limit refuses an answer over it with one short message naming the
// limit and the member, and accepts an answer at it.
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
		{"field over", list(node(`,"resource_class":"12345678901234567"`)), `a string in "resource_class" longer than 16 bytes`},
		{"trait over", list(node(`,"traits":["CUSTOM_LONGER_NAME"]`)), `a string in "traits" longer than 16 bytes`},
		{"traits at the limit", list(node(`,"traits":["A","B"]`)), ""},
		{"traits over", list(node(`,"traits":["A","B","C"]`)), `a record's "traits" holds more than 2 entries (plugin.max_traits)`},
		{"resources over", list(node(`,"resources":{"A":{"total":1},"B":{"total":1},"C":{"total":1}}`)), `"resources" holds more than 2 entries`},
		{"number over", list(node(`,"resources":{"A":{"total":12345678901234567}}`)), "a number or literal in \"total\" longer than 16 bytes"},
		{"too deep", `{"nodes":[{"resources":{"A":{"total":[[1]]}}}]}`, "nested deeper than 5 levels"},
		{"malformed", `{"nodes":[{"uuid":}]}`, "invalid character"},
		{"trailing data", list() + `{}`, "data after the answer"},
		{"nodes twice", `{"nodes":[],"nodes":[]}`, `member "nodes" appears twice`},
		{"nodes not an array", `{"nodes":{}}`, `"nodes" is not an array`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := decodeNodes(c.doc, lim, 1<<20)
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
			if err != nil && len(err.Error()) > 300 {
				t.Fatalf("error of %d bytes", len(err.Error()))
			}
		})
	}
}

// A giant string is refused after MaxField bytes, quoting a short prefix.
func TestAnswerGiantStringIsCutShort(t *testing.T) {
	doc := `{"nodes":[{"uuid":"u","resource_class":"` + strings.Repeat("x", 10<<20) + `"}],"complete":true}`
	_, err := decodeNodes(doc, Limits{}, 1<<30)
	if err == nil || len(err.Error()) > 300 || !strings.Contains(err.Error(), "255 bytes") {
		t.Fatalf("err (%d bytes) = %.300v", len(err.Error()), err)
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
	f.Fuzz(func(t *testing.T, doc string) {
		got, err := decodeNodes(doc, Limits{}, 1<<30)
		if err != nil {
			return
		}
		var want hostabi.ListNodesResponse
		if err := json.Unmarshal([]byte(doc), &want); err != nil {
			t.Fatalf("streamed %q, which encoding/json refuses: %v", doc, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: streamed %+v, encoding/json %+v", doc, got, want)
		}
	})
}
