package doctest

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// packages lists the directories of the repository holding Go files
// (testdata, hidden folders and build output left out), by path.
func packages(t *testing.T) []string {
	top := root(t)
	var out []string
	err := filepath.WalkDir(top, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(top, path)
		if !d.IsDir() {
			return nil
		}
		if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || rel == "build" || rel == "bin" || rel == "dist") {
			return filepath.SkipDir
		}
		if goFiles, _ := filepath.Glob(filepath.Join(path, "*.go")); len(goFiles) > 0 && rel != "." {
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// named says whether the layout names dir: as `dir` or `dir/`, or by its
// path below an ancestor `p/` the same row names (a row for a tree).
func named(rows []map[string]bool, dir string) bool {
	for _, row := range rows {
		if row[dir] || row[dir+"/"] {
			return true
		}
		for p := filepath.Dir(dir); p != "."; p = filepath.Dir(p) {
			rel := strings.TrimPrefix(dir, p+"/")
			if row[p+"/"] && (row[rel] || row[rel+"/"]) {
				return true
			}
		}
	}
	return false
}

// layoutRows are the backticked names of each line of docs/LAYOUT.md.
func layoutRows(t *testing.T) []map[string]bool {
	var rows []map[string]bool
	for _, line := range strings.Split(doc(t, "docs/LAYOUT.md"), "\n") {
		row := map[string]bool{}
		for _, m := range backticked.FindAllStringSubmatch(line, -1) {
			for _, name := range strings.Split(m[1], ", ") {
				row[strings.TrimPrefix(name, "../")] = true
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// docs/LAYOUT.md names every package, and every file of engine/ (its
// tests left out).
func TestLayoutNamesEveryPackageAndEngineFile(t *testing.T) {
	rows := layoutRows(t)
	for _, dir := range packages(t) {
		if !named(rows, dir) {
			t.Errorf("package %s is not named in docs/LAYOUT.md", dir)
		}
	}
	entries, err := os.ReadDir(filepath.Join(root(t), "engine"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasSuffix(name, "_test.go") || !strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, ".md") {
			continue
		}
		if !named(rows, "engine/"+name) && !slicesContain(rows, name) {
			t.Errorf("engine/%s is not named in docs/LAYOUT.md", name)
		}
	}
}

func slicesContain(rows []map[string]bool, name string) bool {
	for _, row := range rows {
		if row[name] {
			return true
		}
	}
	return false
}
