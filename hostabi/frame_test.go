package hostabi_test

import (
	"bytes"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
)

func TestFrameRoundTrip(t *testing.T) {
	for _, c := range []struct{ head, body string }{{"", ""}, {`{"status":200}`, ""}, {"h", "body\x00with\xffbytes"}} {
		head, body, err := hostabi.SplitFrame(hostabi.AppendFrame(nil, []byte(c.head), []byte(c.body)))
		if err != nil || string(head) != c.head || string(body) != c.body {
			t.Errorf("%q %q: got %q %q %v", c.head, c.body, head, body, err)
		}
	}
	for _, bad := range [][]byte{nil, {1, 0, 0}, {5, 0, 0, 0, 'a'}, {0xff, 0xff, 0xff, 0xff}} {
		if _, _, err := hostabi.SplitFrame(bad); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

func TestPackUnpack(t *testing.T) {
	p, n := hostabi.Unpack(hostabi.Pack(0xdeadbeef, 42))
	if p != 0xdeadbeef || n != 42 {
		t.Fatal(p, n)
	}
}

// SplitFrame reads frames a plugin or the host wrote: it must never panic
// and never return more than it was given.
func FuzzSplitFrame(f *testing.F) {
	f.Add(hostabi.AppendFrame(nil, []byte(`{"service":"x"}`), []byte("body")))
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f})
	f.Fuzz(func(t *testing.T, b []byte) {
		head, body, err := hostabi.SplitFrame(b)
		if err != nil {
			return
		}
		if len(head)+len(body)+4 != len(b) || !bytes.Equal(hostabi.AppendFrame(nil, head, body), b) {
			t.Fatalf("split %x into %x and %x", b, head, body)
		}
	})
}
