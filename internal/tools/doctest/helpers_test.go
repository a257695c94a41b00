package doctest

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// root is the repository's top directory.
func root(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// doc reads a file of the repository.
func doc(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var backticked = regexp.MustCompile("`([^`]+)`")

// tableRows maps each backticked name in a table row's first cell to the
// row's cells.
func tableRows(text string) map[string][]string {
	out := map[string][]string{}
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		for _, m := range backticked.FindAllStringSubmatch(cells[0], -1) {
			out[m[1]] = cells
		}
	}
	return out
}
