package projection

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
)

func TestSpecRoundTrips(t *testing.T) {
	p := Projection{Array: "nodes", Fields: []Field{{"uuid", KindString}, {"m", KindBool}, {"t", KindStrings}, {"r", KindRaw}},
		Top: []Field{{"next", KindString}}}
	s, err := ToSpec(p)
	if err != nil {
		t.Fatal(err)
	}
	if s.Fields[2].Kind != hostabi.ProjectStrings {
		t.Fatalf("spec %+v", s)
	}
	back, err := FromSpec(s)
	if err != nil || !reflect.DeepEqual(back, p) {
		t.Fatalf("got %+v, %v", back, err)
	}
	if _, err := ToSpec(Projection{Fields: []Field{{"x", 0}}}); err == nil {
		t.Fatal("a field without a kind was accepted")
	}
}

// Under limits the frame is the one HostProject makes, after the headroom;
// a bad document is an error frame, not an error; only the limits fail.
func TestHostProjectLimited(t *testing.T) {
	p := Projection{Array: "nodes", Fields: []Field{{"uuid", KindString}}}
	spec, _ := encodeSpec(p)
	doc := []byte(`{"nodes": [{"uuid": "a"}, {"uuid": "b"}, {}]}`)
	got, err := HostProjectLimited(doc, p, Limits{Headroom: 16, MaxBytes: 1 << 20})
	if err != nil || string(got[16:]) != string(HostProject(doc, spec)) {
		t.Fatalf("got %q, %v", got, err)
	}
	bad := []byte(`{"nodes": 3}`)
	got, err = HostProjectLimited(bad, p, Limits{Headroom: 16})
	if err != nil || string(got[16:]) != string(HostProject(bad, spec)) {
		t.Fatalf("bad document: %q, %v", got, err)
	}
	var big *TooLargeError
	if _, err := HostProjectLimited(doc, p, Limits{MaxBytes: 40}); !errors.As(err, &big) || big.Max != 40 {
		t.Fatalf("over the cap: %v", err)
	}
	many := []byte(`{"nodes": [` + strings.TrimSuffix(strings.Repeat("{},", 600), ",") + `]}`)
	calls := 0
	_, err = HostProjectLimited(many, p, Limits{Canceled: func() bool { calls++; return calls > 1 }})
	if !errors.Is(err, ErrCanceled) || calls != 2 {
		t.Fatalf("canceled: %v after %d polls", err, calls)
	}
}

func TestFromSpecRefuses(t *testing.T) {
	for _, s := range []hostabi.ProjectSpec{
		{Fields: []hostabi.ProjectField{{Name: "a", Kind: "number"}}},
		{Top: []hostabi.ProjectField{{Name: "a", Kind: "raw"}, {Name: "a", Kind: "bool"}}},
		{Fields: make([]hostabi.ProjectField, hostabi.MaxProjectFields+1)},
	} {
		if _, err := FromSpec(s); err == nil {
			t.Errorf("%+v accepted", s)
		}
	}
}
