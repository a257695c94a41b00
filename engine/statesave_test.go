package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

// TestEncodeStateIsJSONMarshal: the streamed state file is byte for byte
// what json.Marshal wrote before, so every reader (and older engines)
// reads it as it did.
func TestEncodeStateIsJSONMarshal(t *testing.T) {
	rich := richState()
	rich.Holds = map[string]string{"n<1>": "CUSTOM_&X", "a": "B"}
	rich.Key = `http://p k "<&>"`
	cases := []stateFile{
		rich,
		{Version: stateVersion, Key: "k"},
		{Version: stateVersion, Key: "k", Providers: map[string]known{}, Holds: map[string]string{}},
	}
	for _, f := range cases {
		want, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := encodeState(&got, f); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("streamed\n%s\njson.Marshal\n%s", got.Bytes(), want)
		}
	}
}

type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n -= len(p); w.n < 0 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

// TestEncodeStateReportsAWriteError: a failed write is an error, so Save
// keeps the old file and tries again.
func TestEncodeStateReportsAWriteError(t *testing.T) {
	f := richState()
	for i := range 3000 {
		f.Providers[string(rune('f'+i%20))+string(rune(i))] = f.Providers["a"]
	}
	if err := encodeState(&failWriter{n: 100 << 10}, f); err == nil {
		t.Fatal("a writer that fails after 100 KiB: no error")
	}
}
