package placement

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// The flat skip agrees with the token decoder where the idle cycle uses
// it (names not read, so name and parent are skipped too), whole and byte
// by byte, and hands a value nested past its 64 levels to skip.
func TestSkippedAgreesWithTokenDecoder(t *testing.T) {
	deep := func(n int) string {
		return `{"resource_providers": [{"uuid": "u", "generation": 1, "links": ` +
			strings.Repeat(`[{"a": `, n) + `1` + strings.Repeat(`}]`, n) + `}]}`
	}
	cases := append([]string{deep(31), deep(32), deep(33), deep(200), deep(5001),
		`{"resource_providers": [{"uuid": "u", "generation": 1, "links": [{"a": 1}}]}`,
		`{"resource_providers": [{"uuid": "u", "generation": 1, "links": {"a" 1}}]}`,
		`{"resource_providers": [{"uuid": "u", "generation": 1, "links": {1: 1}}]}`,
		`{"resource_providers": [{"uuid": "u", "generation": 1, "name": "x\u0000y", "links": [ ]}]}`,
	}, scanCases...)
	for _, c := range cases {
		for _, slow := range []bool{false, true} {
			var r = iotest.OneByteReader(strings.NewReader(c))
			if !slow {
				r = strings.NewReader(c)
			}
			var got, want []Provider
			gotErr := decodeProviders(r, false, func(p Provider) error { got = append(got, p); return nil })
			wantErr := decodeProvidersTokens(strings.NewReader(c), false, func(p Provider) error { want = append(want, p); return nil })
			if (gotErr == nil) != (wantErr == nil) || gotErr == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("%.80q (slow %v): scanner %+v %v, token decoder %+v %v", c, slow, got, gotErr, want, wantErr)
			}
		}
	}
}

// An idle listing allocates per block of strings, not per provider.
func TestGenerationListingAllocatesPerBlock(t *testing.T) {
	body := providersJSON(2000)
	m := make(generationMap, 2000)
	allocs := testing.AllocsPerRun(5, func() {
		clear(m)
		if err := m.decodeFrom(bytes.NewReader(body)); err != nil || len(m) != 2000 {
			t.Fatal(len(m), err)
		}
	})
	// 2,000 uuids and generations are ~90 KB: six blocks, plus the
	// scanner's buffer doubling and the generations table growing (45
	// here); a string each was over 4,000.
	if allocs > 100 {
		t.Fatalf("%.0f allocations for 2,000 providers", allocs)
	}
	if m["00000000-0000-4000-8000-000000001999"] != Generation("15830081") {
		t.Fatalf("%q", m["00000000-0000-4000-8000-000000001999"])
	}
}

func TestArenaStrings(t *testing.T) {
	var a arena
	long := bytes.Repeat([]byte("x"), arenaBlock)
	got := []string{a.string([]byte("abc")), a.string(nil), a.string(long), a.string([]byte("de"))}
	want := []string{"abc", "", string(long), "de"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%.20q", got)
	}
}
