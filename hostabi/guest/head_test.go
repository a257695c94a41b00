package guest

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
)

// FuzzResponseHead: whatever fastResponseHead accepts, encoding/json
// decodes to the same head; and it accepts every head the host writes
// whose strings need no escape.
func FuzzResponseHead(f *testing.F) {
	heads := []hostabi.HTTPResponseHead{
		{Status: 200, Header: map[string]string{"Content-Type": "application/json", "X-Openstack-Ironic-Api-Version": "1.82"}, Projected: true, Ref: 3},
		{Status: 404, Header: map[string]string{"Content-Length": "12"}},
		{Error: "service \"x\" is not granted"},
		{Status: 200, Header: map[string]string{"A": "é ü"}, Projected: true},
		{Status: 503, Header: map[string]string{}},
		{Status: 200, Ref: 4294967295, Projected: true},
	}
	for _, h := range heads {
		raw, _ := json.Marshal(h)
		f.Add(raw)
		f.Add(append(raw, "   "...))
	}
	for _, s := range []string{`{"status":01}`, `{"status":1e2}`, `{"status":200,"ref":-1}`, `{"status":200,"header":{"a":"b",}}`, `{"status":200} x`, "{\"status\":200,\"error\":\"\xff\"}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fast, ok := fastResponseHead(b)
		if !ok {
			return
		}
		var slow hostabi.HTTPResponseHead
		if err := json.Unmarshal(b, &slow); err != nil || !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q: fast %+v, encoding/json %+v (%v)", b, fast, slow, err)
		}
	})
}

func TestFastResponseHeadTakesWhatTheHostWrites(t *testing.T) {
	for _, h := range []hostabi.HTTPResponseHead{
		{Status: 200, Header: map[string]string{"Content-Type": "application/json", "Date": "Wed, 02 Dec 2026 01:00:00 GMT"}, Projected: true, Ref: 12},
		{Status: 0, Error: "the call's deadline passed"},
		{Status: 301, Header: map[string]string{"Location": "/v1/x"}},
	} {
		raw, _ := json.Marshal(h)
		got, ok := fastResponseHead(append(raw, "  "...))
		if !ok || !reflect.DeepEqual(got, h) {
			t.Errorf("%s: %+v, %v", raw, got, ok)
		}
	}
	if _, ok := fastResponseHead([]byte(`{"status":200,"header":{"A":"\u003c"}}`)); ok {
		t.Error("an escape was taken")
	}
}
