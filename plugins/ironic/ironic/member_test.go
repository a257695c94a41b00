package ironic

import (
	"encoding/json"
	"testing"
)

// member finds what encoding/json finds: the last value of the key, by
// its decoded name, in objects of every shape; and refuses what is not
// an object.
func TestMemberAgreesWithEncodingJSON(t *testing.T) {
	for _, obj := range []string{
		`{}`, ` { "rack" : "r12" } `, `{"a": {"rack": "x", "b": [1, "]"]}, "rack": "r\"1"}`,
		`{"r\u0061ck": 7, "b": null}`, `{"rack": 1, "rack": 2}`, `{"x": "}", "rack": true}`,
		`{"rack": [1, {"a": "}"}], "z": -1.5e3}`, `{"rac": 1, "racks": 2}`,
	} {
		for _, key := range []string{"rack", "b", "z", "a"} {
			checkMember(t, obj, key)
		}
	}
	for _, bad := range []string{`[]`, `"x"`, `3`, ``, `{"a" 1}`, `{"a": 1`, `{"a": }`, `{"a": 1,}`, `{"a": "x`} {
		if _, _, ok := member(bad, "a"); ok {
			t.Errorf("member(%q) accepted", bad)
		}
	}
}

func checkMember(t *testing.T, obj, key string) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(obj), &m); err != nil {
		t.Fatalf("%s: %v", obj, err)
	}
	want, wantFound := m[key]
	got, found, ok := member(obj, key)
	if !ok || found != wantFound || found && !jsonEqual(got, string(want)) {
		t.Errorf("member(%s, %q) = %q %v %v, want %s %v", obj, key, got, found, ok, want, wantFound)
	}
}

func jsonEqual(a, b string) bool {
	var x, y any
	return json.Unmarshal([]byte(a), &x) == nil && json.Unmarshal([]byte(b), &y) == nil &&
		func() bool { ja, _ := json.Marshal(x); jb, _ := json.Marshal(y); return string(ja) == string(jb) }()
}

// FuzzMember: on any valid JSON object member agrees with encoding/json;
// on anything else it never panics.
func FuzzMember(f *testing.F) {
	for _, s := range []string{`{"rack": "r1"}`, `{"a": [{"rack": 1}], "rack": null}`, `{"rack": "\u00e9\\"}`, `{`} {
		f.Add(s, "rack")
	}
	f.Fuzz(func(t *testing.T, obj, key string) {
		var m map[string]json.RawMessage
		if json.Unmarshal([]byte(obj), &m) != nil || m == nil {
			member(obj, key)
			return
		}
		checkMember(t, obj, key)
	})
}
