// Command doccheck fails when an exported name has no doc comment.
//
// It is part of `make check`: `go run ./internal/tools/doccheck DIR...` walks
// the Go files under each DIR (skipping tests, testdata and hidden folders)
// and prints one line per exported type, function, method, constant or
// variable without a comment (package main exports nothing, so only its
// package comment is required), and per package without a package comment,
// then exits 1. A comment on a parenthesised group documents every name in
// it, as godoc shows it. It must never change a file.
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	dirs := os.Args[1:]
	if len(dirs) == 0 {
		dirs = []string{"."}
	}
	var missing []string
	for _, dir := range dirs {
		found, err := checkTree(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "doccheck:", err)
			os.Exit(2)
		}
		missing = append(missing, found...)
	}
	sort.Strings(missing)
	for _, m := range missing {
		fmt.Println(m)
	}
	if len(missing) > 0 {
		fmt.Fprintf(os.Stderr, "doccheck: %d exported names without a doc comment\n", len(missing))
		os.Exit(1)
	}
}

// checkTree returns "file:line: name" for every undocumented exported name
// under root.
func checkTree(root string) ([]string, error) {
	var missing []string
	pkgDoc := map[string]bool{} // directory -> some file has a package comment
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		found, documented, err := checkFile(path)
		missing = append(missing, found...)
		pkgDoc[filepath.Dir(path)] = pkgDoc[filepath.Dir(path)] || documented
		return err
	})
	for dir, documented := range pkgDoc {
		if !documented {
			missing = append(missing, dir+": package comment (doc.go)")
		}
	}
	return missing, err
}

// checkFile returns the undocumented exported names of one file and whether
// it carries the package comment.
func checkFile(path string) ([]string, bool, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, false, err
	}
	if f.Name.Name == "main" {
		return nil, f.Doc != nil, nil
	}
	var missing []string
	report := func(pos token.Pos, what string) {
		missing = append(missing, fmt.Sprintf("%s: %s", fset.Position(pos), what))
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Name.IsExported() && receiverExported(d) && d.Doc == nil {
				report(d.Pos(), funcName(d))
			}
		case *ast.GenDecl:
			grouped := d.Lparen.IsValid()
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() && s.Doc == nil && (grouped || d.Doc == nil) && s.Comment == nil {
						report(s.Pos(), "type "+s.Name.Name)
					}
				case *ast.ValueSpec:
					if s.Doc != nil || d.Doc != nil || s.Comment != nil {
						continue
					}
					for _, n := range s.Names {
						if n.IsExported() {
							report(n.Pos(), n.Name)
						}
					}
				}
			}
		}
	}
	return missing, f.Doc != nil, nil
}

// receiverExported reports whether a method's receiver type is exported
// (a plain function counts as exported here).
func receiverExported(d *ast.FuncDecl) bool {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return true
	}
	return ast.IsExported(typeName(d.Recv.List[0].Type))
}

func typeName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return typeName(t.X)
	case *ast.IndexExpr:
		return typeName(t.X)
	case *ast.IndexListExpr:
		return typeName(t.X)
	case *ast.Ident:
		return t.Name
	}
	return ""
}

func funcName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return "func " + d.Name.Name
	}
	return "method " + typeName(d.Recv.List[0].Type) + "." + d.Name.Name
}
