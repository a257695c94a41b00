package placement

import (
	"bytes"
	"io"
	"reflect"
	"testing"
	"testing/iotest"
)

// both decodes body with the scanner (through a reader that hands out one
// byte at a time when slow, so every step is cut somewhere) and with the
// token decoder it replaced.
func both(t *testing.T, body []byte, slow bool) (got, want []Provider, gotErr, wantErr error) {
	t.Helper()
	var r io.Reader = bytes.NewReader(body)
	if slow {
		r = iotest.OneByteReader(r)
	}
	gotErr = decodeProviders(r, true, func(p Provider) error { got = append(got, p); return nil })
	wantErr = decodeProvidersTokens(bytes.NewReader(body), true, func(p Provider) error { want = append(want, p); return nil })
	return got, want, gotErr, wantErr
}

func agree(t *testing.T, body []byte, slow bool) {
	t.Helper()
	got, want, gotErr, wantErr := both(t, body, slow)
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("%q: scanner %v, token decoder %v", body, gotErr, wantErr)
	}
	if gotErr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: scanner %+v, token decoder %+v", body, got, want)
	}
}

var scanCases = []string{
	`{"resource_providers": []}`, `{}`, `{"resource_providers": null}`, `[]`, `{"a": 1}`,
	`{"resource_providers": [{"uuid": "u", "generation": 1}]}`,
	`{"resource_providers": [{"uuid": "u", "generation": null}]}`,
	`{"resource_providers": [{"uuid": null, "generation": 1}]}`,
	`{"resource_providers": [{"uuid": 7, "generation": 1}]}`,
	`{"resource_providers": [{"uuid": "u", "generation": "1"}]}`,
	`{"resource_providers": [{"uuid": "u", "generation": {"a": [1, 2e-3, -0.5E+7]}}]}`,
	`{"resource_providers": [{"uuid": "u\u0041\n\/", "name": "\ud83d\ude00", "generation": 1, "parent_provider_uuid": "p"}]}`,
	`{"resource_providers": [{"uuid": "u", "name": "\ud83d", "generation": 1}]}`,
	`{"resource_providers": [{"uuid": "u", "name": "\ude00\ud83d", "generation": 1}]}`,
	`{"resource_providers": [{"uuid": "u", "name": "\ud83dx", "generation": 1}]}`,
	`{"resource_providers": [{"uuid": "u", "name": "\x", "generation": 1}]}`,
	`{"resource_providers": [{"uuid": "u", "name": "\u12G4", "generation": 1}]}`,
	"{\"resource_providers\": [{\"uuid\": \"u\", \"name\": \"caf\xc3\xa9\", \"generation\": 1}]}",
	"{\"resource_providers\": [{\"uuid\": \"u\", \"name\": \"caf\xc3\", \"generation\": 1}]}",
	"{\"resource_providers\": [{\"uuid\": \"u\", \"name\": \"a\tb\", \"generation\": 1}]}",
	`{"resource_providers": [{"uuid": "u", "generation": 01}]}`,
	`{"resource_providers": [{"uuid": "u", "generation": 1.}]}`,
	`{"resource_providers": [{"uuid": "u", "generation": -}]}`,
	`{"resource_providers": [{"uuid": "u", "generation": 1e}]}`,
	`{"resource_providers": [{"uuid": "u", "generation": 1, "links": [tru]}]}`,
	`{"resource_providers": [{"uuid": "u", "generation": 1, "links": [true, false, null]}]}`,
	`{"resource_providers": [{"uuid": "u", "generation": 1,}]}`,
	`{"resource_providers": [{"uuid": "u", "generation": 1}],}`,
	`{"resource_providers": [{"uuid": "u", "generation": 1} {"uuid": "v", "generation": 2}]}`,
	`{"resource_providers": [{"uuid": "u" "generation": 1}]}`,
	`{"resource_providers": [{"uuid": "u", "generation": 1}], "resource_providers": [{"uuid": "v", "generation": 2}]}`,
	`{"x": {"y": [{}]}, "resource_providers": [{"\u0075uid": "u", "generation": 3}]}`,
	` { "resource_providers" : [ { "uuid" : "u" , "generation" : 1 } ] } trailing`,
	`{"resource_providers": [{"uuid": "u", "generation": 1}]`,
}

// The scanner accepts what the token decoder accepted, refuses what it
// refused, and reads the same providers, whole or cut anywhere, read
// whole or byte by byte.
func TestScannerAgreesWithTokenDecoder(t *testing.T) {
	cases := append(scanCases, string(providersJSON(3)))
	for _, c := range cases {
		for _, slow := range []bool{false, true} {
			agree(t, []byte(c), slow)
			for i := range len(c) {
				agree(t, []byte(c[:i]), slow)
			}
		}
	}
	body := providersJSON(2)
	for i := range body {
		for _, b := range []byte{'"', '\\', '{', '}', '[', ']', ',', ':', ' ', '0', 'x', 0, 0x80, 0xff} {
			mutated := bytes.Clone(body)
			mutated[i] = b
			agree(t, mutated, i%2 == 0)
		}
	}
}

// A listing larger than the scanner's buffer, and one member larger than
// it, read in pieces.
func TestScannerReadsPastItsBuffer(t *testing.T) {
	agree(t, providersJSON(500), false)
	big := bytes.Repeat([]byte("a"), 200<<10)
	body := []byte(`{"resource_providers": [{"uuid": "u", "junk": "` + string(big) + `", "generation": 4}]}`)
	agree(t, body, false)
}

func FuzzScanner(f *testing.F) {
	for _, c := range scanCases {
		f.Add([]byte(c))
	}
	f.Add(providersJSON(2))
	f.Fuzz(func(t *testing.T, body []byte) {
		agree(t, body, len(body)%2 == 0)
	})
}
