package doctest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/events"
	"github.com/rpengine/rpengine/internal/ops"
)

// literalMetrics are the names in `Name: "rpengine_..."` of the product's
// sources (tests, test support and plugins left out): every vector, whose
// series a registry shows only once one is set.
func literalMetrics(t *testing.T) map[string]bool {
	out := map[string]bool{}
	fset := token.NewFileSet()
	top := root(t)
	err := filepath.WalkDir(top, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(top, path)
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || rel == "plugins" || rel == "hostabi" || rel == "internal/testing" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			kv, ok := n.(*ast.KeyValueExpr)
			if id, isID := kvKey(kv, ok); isID && id == "Name" {
				if lit, ok := kv.Value.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, _ := strconv.Unquote(lit.Value); strings.HasPrefix(s, "rpengine_") {
						out[s] = true
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func kvKey(kv *ast.KeyValueExpr, ok bool) (string, bool) {
	if !ok {
		return "", false
	}
	id, isID := kv.Key.(*ast.Ident)
	if !isID {
		return "", false
	}
	return id.Name, true
}

// Every metric the daemon registers (its registry as the daemon builds
// it, and every literal name in the sources) is in docs/OPERATIONS.md.
func TestMetricsAreDocumented(t *testing.T) {
	names := literalMetrics(t)
	m := ops.NewMetrics()
	events.NewMetrics(m.Registry())
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if strings.HasPrefix(f.GetName(), "rpengine_") {
			names[f.GetName()] = true
		}
	}
	if len(names) < 30 {
		t.Fatalf("only %d metrics found: the walk is broken", len(names))
	}
	documented := map[string]bool{}
	for cell := range tableRows(doc(t, "docs/OPERATIONS.md")) {
		name, _, _ := strings.Cut(cell, "{")
		documented[name] = true
	}
	for name := range names {
		if !documented[name] {
			t.Errorf("metric %s is not in docs/OPERATIONS.md's table", name)
		}
	}
}
