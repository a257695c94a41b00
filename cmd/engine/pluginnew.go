package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"

	"github.com/rpengine/rpengine/hostabi"
)

const pluginNewUsage = "engine plugin new NAME [DIR]"

// pluginName is what NAME may be: it names the module, the file and the
// plugin, so it stays a plain lower-case word.
var pluginName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,39}$`)

// cmdPluginNew writes a plugin that builds on its own, outside this
// repository: go.mod, main.go, README.md, and the SDK's source in
// sdk/hostabi, which go.mod's replace points at. The SDK module is served
// by no module proxy, so the copy beside the plugin is what makes
// `go build` work anywhere; it is the SDK of this very engine, so the ABI
// matches. DIR (default ./NAME) must not exist or must be empty.
func cmdPluginNew(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("plugin new", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v; %s", errUsage, err, pluginNewUsage)
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		return fmt.Errorf("%w: %s", errUsage, pluginNewUsage)
	}
	name, dir := fs.Arg(0), fs.Arg(0)
	if !pluginName.MatchString(name) {
		return fmt.Errorf("%w: plugin name %q: want a lower-case letter, then letters, digits or '-' (at most 40)", errUsage, name)
	}
	if fs.NArg() == 2 {
		dir = fs.Arg(1)
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("plugin new: %s exists and is not empty", dir)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("plugin new: %w", err)
	}
	files := map[string]string{}
	for _, f := range []string{"go.mod", "main.go", "README.md"} {
		text, err := pluginFile(f, name)
		if err != nil {
			return err
		}
		files[f] = text
	}
	for f, text := range files {
		if err := writeNew(filepath.Join(dir, f), []byte(text)); err != nil {
			return err
		}
	}
	if err := writeSDK(filepath.Join(dir, "sdk", "hostabi")); err != nil {
		return err
	}
	fmt.Fprintf(out, "plugin %s written to %s (SDK ABI v%d in %s)\nbuild:  cd %s && GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o %s.wasm .\ntest:   engine plugin test %s.wasm\n",
		name, dir, hostabi.Version, filepath.Join(dir, "sdk", "hostabi"), dir, name, name)
	return nil
}

// pluginFile is one file of the template for plugin name.
func pluginFile(file, name string) (string, error) {
	t, err := template.New(file).Parse(pluginTemplates[file])
	if err != nil {
		return "", err
	}
	var b strings.Builder
	err = t.Execute(&b, struct{ Name, SDKVersion string }{name, "v" + version})
	return b.String(), err
}

// writeSDK copies the SDK module's source, without its tests.
func writeSDK(dir string) error {
	return fs.WalkDir(hostabi.Source, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, "_test.go") {
			return err
		}
		b, err := hostabi.Source.ReadFile(path)
		if err != nil {
			return err
		}
		return writeNew(filepath.Join(dir, filepath.FromSlash(path)), b)
	})
}

func writeNew(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("plugin new: %w", err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("plugin new: %w", err)
	}
	return nil
}
