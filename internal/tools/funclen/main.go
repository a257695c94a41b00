// Command funclen fails when a function is longer than a limit.
//
// It is part of `make check`: `go run ./internal/tools/funclen -max 60 DIR...`
// walks the Go files under each DIR (tests included unless -notests;
// testdata and hidden folders skipped) and prints one line per function or method whose
// declaration, from `func` to its closing brace, spans more than -max
// lines, then exits 1. Short functions keep each rule readable in a screen.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	max := flag.Int("max", 60, "the most lines a function may span")
	noTests := flag.Bool("notests", false, "leave out the _test.go files")
	flag.Parse()
	long := 0
	for _, dir := range flag.Args() {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := d.Name()
			if d.IsDir() && path != dir && (name == "testdata" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(name, ".go") || *noTests && strings.HasSuffix(name, "_test.go") {
				return nil
			}
			n, err := check(path, *max)
			long += n
			return err
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "funclen:", err)
			os.Exit(2)
		}
	}
	if long > 0 {
		os.Exit(1)
	}
}

// check prints the functions of one file longer than max lines.
func check(path string, max int) (int, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return 0, err
	}
	long := 0
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		from, to := fset.Position(fn.Pos()), fset.Position(fn.End())
		if n := to.Line - from.Line + 1; n > max {
			fmt.Printf("%s:%d: %s is %d lines (at most %d)\n", path, from.Line, fn.Name.Name, n, max)
			long++
		}
	}
	return long, nil
}
