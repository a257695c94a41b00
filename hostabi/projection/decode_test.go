package projection

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

var nodeProjection = Projection{
	Array: "nodes",
	Fields: []Field{
		{"uuid", KindString}, {"maintenance", KindBool}, {"traits", KindStrings},
		{"power_state", KindString}, {"properties", KindRaw},
	},
	Top: []Field{{"next", KindString}},
}

func TestProjectReadsRequestedFields(t *testing.T) {
	doc := `{"nodes": [
	  {"uuid": "a", "maintenance": true, "traits": ["X", "Y"], "power_state": null,
	   "links": [{"href": "http://x/\"q\"", "rel": "self"}], "properties": {"cpus": 16}},
	  {"uuid": "b\u00e9\n", "maintenance": false, "traits": [], "extra": {"k": [1, 2, {"z": null}]}},
	  {}
	 ], "next": "http://h/v1/nodes?marker=b"}`
	r, err := ProjectLocal([]byte(doc), nodeProjection)
	if err != nil {
		t.Fatal(err)
	}
	if r.Len() != 3 {
		t.Fatalf("len %d", r.Len())
	}
	type row struct {
		uuid   string
		maint  bool
		traits []string
		power  State
		props  string
	}
	var got []row
	for i := range r.Len() {
		got = append(got, row{r.String(i, 0), r.Bool(i, 1), r.Strings(i, 2), r.State(i, 3), r.String(i, 4)})
	}
	want := []row{
		{"a", true, []string{"X", "Y"}, Null, `{"cpus": 16}`},
		{"bé\n", false, []string{}, Absent, ""},
		{"", false, nil, Absent, ""},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %#v\nwant %#v", got, want)
	}
	if r.TopString(0) != "http://h/v1/nodes?marker=b" || r.TopState(0) != Set {
		t.Fatalf("next = %q", r.TopString(0))
	}
}

func TestProjectRefusesDocumentsOfTheWrongShape(t *testing.T) {
	cases := []struct{ doc, want string }{
		{`{"nodes": [`, "not valid JSON"},
		{``, "not valid JSON"},
		{`[]`, "is a JSON array, want an object"},
		{`{"next": null}`, `no member "nodes"`},
		{`{"nodes": null}`, `member "nodes" is a JSON null, want an array`},
		{`{"nodes": [1]}`, "nodes[0] is a JSON number, want an object"},
		{`{"nodes": [{"uuid": 7}]}`, "nodes[0].uuid is a JSON number, want a string or null"},
		{`{"nodes": [{}, {"maintenance": "yes"}]}`, "nodes[1].maintenance is a JSON string, want true, false or null"},
		{`{"nodes": [{"traits": ["A", 3]}]}`, "nodes[0].traits[1] is a JSON number, want a string"},
		{`{"nodes": [], "next": {}}`, "next is a JSON object, want a string or null"},
	}
	for _, c := range cases {
		_, err := ProjectLocal([]byte(c.doc), nodeProjection)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.doc, err, c.want)
		}
	}
}

func TestProjectTopOnlyAndEmptyArray(t *testing.T) {
	r, err := ProjectLocal([]byte(`{"version": "1.82", "ok": true}`),
		Projection{Top: []Field{{"version", KindString}, {"ok", KindBool}, {"gone", KindString}}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Len() != 0 || r.TopString(0) != "1.82" || !r.TopBool(1) || r.TopState(2) != Absent {
		t.Fatalf("got %d %q %v %v", r.Len(), r.TopString(0), r.TopBool(1), r.TopState(2))
	}
	r, err = ProjectLocal([]byte(`{"nodes": []}`), nodeProjection)
	if err != nil || r.Len() != 0 || r.TopState(0) != Absent {
		t.Fatalf("empty page: %v %d", err, r.Len())
	}
}

func TestProjectLastDuplicateWins(t *testing.T) {
	r, err := ProjectLocal([]byte(`{"nodes": [{"uuid": "x", "uuid": "y"}], "next": "1", "next": "2"}`), nodeProjection)
	if err != nil {
		t.Fatal(err)
	}
	if r.String(0, 0) != "y" || r.TopString(0) != "2" {
		t.Fatalf("got %q %q", r.String(0, 0), r.TopString(0))
	}
}

func TestSpecRoundTrip(t *testing.T) {
	b, err := encodeSpec(nodeProjection)
	if err != nil {
		t.Fatal(err)
	}
	p, err := decodeSpec(b)
	if err != nil || !reflect.DeepEqual(p, nodeProjection) {
		t.Fatalf("round trip: %v %#v", err, p)
	}
	if _, err := encodeSpec(Projection{Fields: []Field{{"a\nb", KindString}}}); err == nil {
		t.Fatal("newline in a name accepted")
	}
	if _, err := encodeSpec(Projection{Fields: []Field{{"a", 0}}}); err == nil {
		t.Fatal("kind 0 accepted")
	}
	for _, bad := range []string{"", "A", "Anodes\nF9x\n", "Anodes\nQ1x\n", "Xnodes\n"} {
		if _, err := decodeSpec([]byte(bad)); err == nil {
			t.Errorf("spec %q accepted", bad)
		}
	}
}

func TestParseWireRefusesBadFrames(t *testing.T) {
	good := HostProject([]byte(`{"nodes":[{"uuid":"a"}]}`), mustSpec(t, nodeProjection))
	for _, bad := range [][]byte{nil, []byte("RPJ1"), []byte("XXXX\x00\x00\x00\x00"), good[:len(good)-1]} {
		if _, err := parseWire(bad); err == nil {
			t.Errorf("frame %q accepted", bad)
		}
	}
	if _, err := parseWire(good); err != nil {
		t.Fatal(err)
	}
}

func mustSpec(t testing.TB, p Projection) []byte {
	b, err := encodeSpec(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The scanner accepts exactly what encoding/json accepts, including its
// nesting limit (10,000 levels).
func TestScannerNestingLimitMatchesEncodingJSON(t *testing.T) {
	for _, levels := range []int{9999, 10000, 10001} {
		doc := []byte(`{"a": [], "r": ` + strings.Repeat("[", levels-1) + strings.Repeat("]", levels-1) + `}`)
		if got, want := validates(doc), json.Valid(doc); got != want {
			t.Errorf("%d levels: scanner %v, json.Valid %v", levels, got, want)
		}
	}
}
