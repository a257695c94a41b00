package engine

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/rpengine/rpengine/engine/placement"
)

// richState has every field of known set somewhere, empty and null sets,
// and providers that share values.
func richState() stateFile {
	inv := map[string]placement.Inventory{"CUSTOM_X": {Total: 1, Reserved: 1, MinUnit: 1, MaxUnit: 1, StepSize: 1, AllocationRatio: 1.5}}
	return stateFile{Version: stateVersion, Key: "http://p k", Round: 42, Microversion: "1.39", Providers: map[string]known{
		"a": {Observed: Observed{Exists: true, Generation: "99", Inventory: inv, Traits: []string{"A", "B"}, Aggregates: []string{"g"}},
			Record: Record{Managed: Managed{Traits: []string{"A"}}, Plugin: "fake"}},
		"b": {Observed: Observed{Exists: true, Generation: "100", Inventory: inv, Traits: []string{"A", "B"}, Aggregates: []string{}},
			Record: Record{Managed: Managed{Traits: []string{"A"}, Aggregates: []string{}}, Plugin: "fake"}},
		"c": {Record: Record{Managed: Managed{Traits: []string{"A"}}, Retained: []string{"CUSTOM_OLD"}, GoneSince: time.Unix(100, 5).UTC(),
			ProofRound: 7, Pending: true}},
		"d": {Observed: Observed{Exists: true, Generation: "18446744073709551615", Inventory: map[string]placement.Inventory{}}},
		"e": {},
	}}
}

// TestReadStateFileAgreesWithJSONv2 checks that the streaming reader
// decodes what encoding/json wrote exactly as json v2's Unmarshal does,
// on well-formed files and on edge cases written by hand.
func TestReadStateFileAgreesWithJSONv2(t *testing.T) {
	written, err := json.Marshal(richState())
	if err != nil {
		t.Fatal(err)
	}
	cases := []string{
		string(written),
		`{"version":1,"key":"k","providers":null}`,
		`{"version":1,"key":"k","providers":{}}`,
		`{"version":1,"key":"k","providers":{"u":null}}`,
		`{"version":1,"key":"k","unknown":[1,{"x":2}],"providers":{"u":{"Exists":true,"Generation":"5","Other":{"a":1}}}}`,
		`{"providers":{"u":{"Traits":null,"Aggregates":[],"Inventory":null,"Managed":null,"Plugin":"p"}},"round":3}`,
		` {"version" : 1 , "providers" : { "u" : { "Exists" : false , "Generation" : 7 } } } `,
	}
	for _, c := range cases {
		want, werr := decodeV2(c)
		got, gerr := readStateFile(strings.NewReader(c))
		if (werr == nil) != (gerr == nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("%s\n got %+v (%v)\nwant %+v (%v)", c, got, gerr, want, werr)
		}
	}
}

func decodeV2(s string) (stateFile, error) {
	var f stateFile
	err := jsonv2.Unmarshal([]byte(s), &f)
	return f, err
}

// TestReadStateFileRefusesWhatJSONv2Refuses: a torn, malformed or
// mistyped file is refused, never half-read into a cache.
func TestReadStateFileRefusesWhatJSONv2Refuses(t *testing.T) {
	written, _ := json.Marshal(richState())
	for _, c := range []string{
		string(written[:len(written)/2]),
		string(written) + "x",
		string(written) + "{}",
		`{"version":"1"}`,
		`{"providers":{"u":{"Exists":1}}}`,
		`{"providers":{"u":{"Generation":null}}}`,
		`{"providers":{"u":{"Traits":"A"}}}`,
		`{"providers":{"u":{"Inventory":{"X":{"total":"1"}}}}}`,
		`{"providers":{"u":{"GoneSince":"yesterday"}}}`,
		`{"providers":[]}`,
		`[]`,
		``,
	} {
		if _, err := readStateFile(strings.NewReader(c)); err == nil {
			t.Errorf("%.80q read without error", c)
		}
		if _, err := decodeV2(c); err == nil {
			t.Errorf("%.80q: json v2 accepts it: the case tests nothing", c)
		}
	}
}

// TestReadStateFileShares: equal values are one value, so 100,000
// providers with the same inventory hold one map.
func TestReadStateFileShares(t *testing.T) {
	written, _ := json.Marshal(richState())
	f, err := readStateFile(bytes.NewReader(written))
	if err != nil {
		t.Fatal(err)
	}
	a, b := f.Providers["a"], f.Providers["b"]
	if reflect.ValueOf(a.Inventory).UnsafePointer() != reflect.ValueOf(b.Inventory).UnsafePointer() || &a.Traits[0] != &b.Traits[0] {
		t.Fatal("equal inventories and traits were not shared")
	}
}

func FuzzReadStateFile(f *testing.F) {
	written, _ := json.Marshal(richState())
	f.Add(written)
	f.Add([]byte(`{"providers":{"u":{"Exists":true,"Generation":"5"}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, gerr := readStateFile(bytes.NewReader(b))
		var want stateFile
		werr := jsonv2.Unmarshal(b, &want)
		if gerr == nil && werr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("differs from json v2:\n got %+v\nwant %+v", got, want)
		}
		if gerr == nil && werr != nil {
			t.Fatalf("accepted what json v2 refuses (%v)", werr)
		}
	})
}

// TestReadStateFileKnowsEveryField: a field added to known (or Observed)
// must be added to the reader too, or restarts would lose it.
func TestReadStateFileKnowsEveryField(t *testing.T) {
	var walk func(reflect.Type)
	walk = func(typ reflect.Type) {
		for f := range typ.Fields() {
			if f.Anonymous {
				walk(f.Type)
				continue
			}
			if !slices.Contains(knownFields, f.Name) {
				t.Errorf("field %s of %s is not read by readStateFile", f.Name, typ)
			}
		}
	}
	walk(reflect.TypeFor[known]())
}
