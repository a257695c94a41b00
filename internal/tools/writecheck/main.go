// Command writecheck fails when a Placement write is made outside the
// writer the ownership record hands out.
//
// It is part of `make check`: `go run ./internal/tools/writecheck ./...`
// type-checks each package of the module (tests and internal/testing
// left out: test support writes to Placement to set scenes) against the
// compiler's export data (`go list -export`), and prints one line for
// every use — a call or a method value — of a write method of
// placement.Client (Create*, Set*, Delete*, Ensure*, Put*, Reshape)
// outside engine/placement itself and engine/internal/record, whose
// Keeper.Intend makes the intent durable before it hands the writer out.
// It exits 1 when it printed any.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

const (
	module  = "github.com/rpengine/rpengine"
	client  = module + "/engine/placement"
	allowed = module + "/engine/internal/record"
)

// writeMethod is a write of placement.Client, by name.
var writeMethod = regexp.MustCompile(`^(Create|Set|Delete|Ensure|Put)[A-Z]|^Reshape$`)

// pkg is what `go list -export -json` says of one package.
type pkg struct {
	ImportPath string
	Dir        string
	Export     string
	GoFiles    []string
	Standard   bool
	Module     *struct{ Path string }
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run checks the packages of patterns and returns the exit status: 0
// clean, 1 a write found, 2 the check could not run.
func run(patterns []string, stdout, stderr io.Writer) int {
	pkgs, err := list(patterns, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "writecheck:", err)
		return 2
	}
	exports := map[string]string{}
	for _, p := range pkgs {
		exports[p.ImportPath] = p.Export
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if f, ok := exports[path]; ok && f != "" {
			return os.Open(f)
		}
		return nil, fmt.Errorf("no export data for %s", path)
	})
	found := 0
	for _, p := range pkgs {
		if !checked(p) {
			continue
		}
		n, err := check(fset, imp, p, stdout)
		if err != nil {
			fmt.Fprintln(stderr, "writecheck:", err)
			return 2
		}
		found += n
	}
	if found > 0 {
		fmt.Fprintf(stdout, "writecheck: %d Placement write(s) outside the record's writer (engine/internal/record)\n", found)
		return 1
	}
	return 0
}

// list runs go list over patterns, with every dependency's export data.
func list(patterns []string, stderr io.Writer) ([]pkg, error) {
	cmd := exec.Command("go", append([]string{"list", "-export", "-deps", "-json"}, patterns...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	var pkgs []pkg
	for dec := json.NewDecoder(&out); dec.More(); {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("go list output: %w", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// checked says whether p is product code the rule covers.
func checked(p pkg) bool {
	if p.Standard || p.Module == nil || p.Module.Path != module {
		return false
	}
	switch {
	case p.ImportPath == client, p.ImportPath == allowed, strings.HasPrefix(p.ImportPath, module+"/internal/testing/"):
		return false
	}
	return true
}

// check type-checks p and prints each write of placement.Client in it.
func check(fset *token.FileSet, imp types.Importer, p pkg, out io.Writer) (int, error) {
	var files []*ast.File
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, 0)
		if err != nil {
			return 0, err
		}
		files = append(files, f)
	}
	info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}}
	conf := types.Config{Importer: imp}
	if _, err := conf.Check(p.ImportPath, fset, files, info); err != nil {
		return 0, fmt.Errorf("%s: %w", p.ImportPath, err)
	}
	var found []string
	for sel, s := range info.Selections {
		if isWrite(s) {
			found = append(found, fmt.Sprintf("%s: %s outside the record's writer", fset.Position(sel.Sel.Pos()), s.Obj().Name()))
		}
	}
	slices.Sort(found)
	for _, f := range found {
		fmt.Fprintln(out, f)
	}
	return len(found), nil
}

// isWrite says whether s selects a write method of placement.Client.
func isWrite(s *types.Selection) bool {
	fn, ok := s.Obj().(*types.Func)
	if !ok || !writeMethod.MatchString(fn.Name()) {
		return false
	}
	recv := fn.Signature().Recv()
	if recv == nil {
		return false
	}
	t := recv.Type()
	if ptr, ok := t.(*types.Pointer); ok {
		t = ptr.Elem()
	}
	named, ok := t.(*types.Named)
	return ok && named.Obj().Name() == "Client" && named.Obj().Pkg() != nil && named.Obj().Pkg().Path() == client
}
