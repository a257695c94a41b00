// Command licenses writes the third-party licence inventory of the
// modules a set of packages is built from: for each target (GOOS/GOARCH
// and packages) it asks `go list -deps` which modules are linked in, reads
// the licence and NOTICE files at each module's root in the module cache,
// names the licence with Google's licenseclassifier and prints Markdown:
// a table, then every file verbatim. It fails on a module with no licence
// file or one the classifier cannot name, so nothing ships unaccounted.
//
//	licenses -C ROOT linux/amd64=./cmd/engine wasip1/wasm=./plugins/fake,./plugins/ironic
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/google/licenseclassifier/v2/assets"
)

type module struct {
	Path, Version, Dir string
	Main               bool
	Replace            *module
	usedBy             []string
}

func main() {
	root := flag.String("C", ".", "directory of the main module")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: licenses [-C DIR] GOOS/GOARCH=PKG[,PKG...]...")
		os.Exit(2)
	}
	mods := map[string]*module{}
	for _, t := range flag.Args() {
		if err := collect(*root, t, mods); err != nil {
			fmt.Fprintln(os.Stderr, "licenses:", err)
			os.Exit(1)
		}
	}
	if err := addGo(*root, mods); err != nil {
		fmt.Fprintln(os.Stderr, "licenses:", err)
		os.Exit(1)
	}
	if err := write(os.Stdout, mods); err != nil {
		fmt.Fprintln(os.Stderr, "licenses:", err)
		os.Exit(1)
	}
}

// collect adds the modules target's packages are built from.
func collect(root, target string, mods map[string]*module) error {
	platform, pkgs, ok := strings.Cut(target, "=")
	goos, goarch, ok2 := strings.Cut(platform, "/")
	if !ok || !ok2 {
		return fmt.Errorf("target %q: want GOOS/GOARCH=PKG[,PKG...]", target)
	}
	args := append([]string{"list", "-deps", "-json=Module"}, strings.Split(pkgs, ",")...)
	cmd := exec.Command("go", args...)
	cmd.Dir, cmd.Stderr = root, os.Stderr
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("go list for %s: %w", target, err)
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct{ Module *module }
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
		m := p.Module
		if m == nil || m.Main || m.Replace != nil && m.Replace.Version == "" {
			continue // the standard library, this module, or one of its own (replaced by a directory)
		}
		if m.Replace != nil {
			m = &module{Path: m.Path, Version: m.Replace.Version, Dir: m.Replace.Dir}
		}
		if mods[m.Path] == nil {
			mods[m.Path] = m
		}
		if !slices.Contains(mods[m.Path].usedBy, platform) {
			mods[m.Path].usedBy = append(mods[m.Path].usedBy, platform)
		}
	}
}

// addGo adds the Go standard library and runtime, linked into every
// binary, with the toolchain's LICENSE.
func addGo(root string, mods map[string]*module) error {
	cmd := exec.Command("go", "env", "GOROOT", "GOVERSION")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("go env: %w", err)
	}
	f := strings.Fields(string(out))
	if len(f) != 2 {
		return fmt.Errorf("go env GOROOT GOVERSION: %q", out)
	}
	platforms := []string{}
	for _, m := range mods {
		for _, p := range m.usedBy {
			if !slices.Contains(platforms, p) {
				platforms = append(platforms, p)
			}
		}
	}
	mods["std"] = &module{Path: "Go standard library (std)", Version: f[1], Dir: f[0], usedBy: platforms}
	return nil
}

var licenceFile = regexp.MustCompile(`(?i)^(licen[cs]e|copying|notice|patents)([-._].*)?$`)

type file struct{ name, text, kind string }

// files reads m's licence and notice files, naming each licence.
func files(m *module) ([]file, []string, error) {
	c, err := assets.DefaultClassifier()
	if err != nil {
		return nil, nil, err
	}
	entries, err := os.ReadDir(m.Dir)
	if err != nil {
		return nil, nil, err
	}
	var fs []file
	var names []string
	for _, e := range entries {
		if e.IsDir() || !licenceFile.MatchString(e.Name()) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(m.Dir, e.Name()))
		if err != nil {
			return nil, nil, err
		}
		f := file{name: e.Name(), text: string(b), kind: "notice"}
		if up := strings.ToUpper(e.Name()); !strings.HasPrefix(up, "NOTICE") && !strings.HasPrefix(up, "PATENTS") {
			f.kind = "licence"
			for _, r := range c.Match(b).Matches {
				if r.MatchType == "License" && !slices.Contains(names, r.Name) {
					names = append(names, r.Name)
				}
			}
		}
		fs = append(fs, f)
	}
	if !slices.ContainsFunc(fs, func(f file) bool { return f.kind == "licence" }) {
		return nil, nil, fmt.Errorf("%s %s: no licence file in %s", m.Path, m.Version, m.Dir)
	}
	if len(names) == 0 {
		return nil, nil, fmt.Errorf("%s %s: the classifier names no licence in its files", m.Path, m.Version)
	}
	slices.Sort(names)
	return fs, names, nil
}

func write(w io.Writer, mods map[string]*module) error {
	paths := make([]string, 0, len(mods))
	for p := range mods {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	var table, texts strings.Builder
	for _, p := range paths {
		m := mods[p]
		fs, names, err := files(m)
		if err != nil {
			return err
		}
		slices.Sort(m.usedBy)
		fmt.Fprintf(&table, "| %s | %s | %s | %s |\n", m.Path, m.Version, strings.Join(names, ", "), strings.Join(m.usedBy, ", "))
		fmt.Fprintf(&texts, "\n## %s %s\n", m.Path, m.Version)
		for _, f := range fs {
			fmt.Fprintf(&texts, "\n### %s\n\n```text\n%s\n```\n", f.name, strings.TrimRight(f.text, "\n"))
		}
	}
	_, err := fmt.Fprintf(w, "# Third-party licences\n\n"+
		"The Go modules linked into rpengine's binaries and plugins, from `go list -deps` for each\n"+
		"target, with each module's licence and NOTICE files verbatim. Generated by\n"+
		"scripts/release/tools/licenses (`make release`); the licences are named by\n"+
		"github.com/google/licenseclassifier/v2. rpengine itself: LICENSE (Apache-2.0) and NOTICE.\n\n"+
		"| Module | Version | Licence | Linked into |\n|---|---|---|---|\n%s%s", table.String(), texts.String())
	return err
}
