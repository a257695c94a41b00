package main

import (
	"bytes"
	"strings"
	"testing"
)

// A call and a method value of placement.Client's writes are found, each
// named with its place; reads are not, and a clean package passes.
func TestFindsWritesOutsideTheRecord(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run([]string{"./testdata/bad"}, &out, &errs); code != 1 {
		t.Fatalf("bad: exit %d, want 1\n%s%s", code, out.String(), errs.String())
	}
	for _, want := range []string{"bad.go:12:", "EnsureTrait", "bad.go:15:", "DeleteProvider", "2 Placement write(s)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if code := run([]string{"./testdata/good"}, &out, &errs); code != 0 || out.Len() > 0 {
		t.Fatalf("good: exit %d, want 0\n%s%s", code, out.String(), errs.String())
	}
}
