package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rpengine/rpengine/internal/wasmhost"
)

// cmdPlugin runs the plugin subcommands: inspect, test and new.
func cmdPlugin(ctx context.Context, args []string, asJSON bool, out io.Writer, log *slog.Logger) error {
	if len(args) > 0 && args[0] == "test" {
		return cmdPluginTest(ctx, args[1:], asJSON, out, log)
	}
	if len(args) > 0 && args[0] == "new" {
		return cmdPluginNew(args[1:], out)
	}
	if len(args) > 0 && args[0] == "compile" {
		return cmdPluginCompile(ctx, args[1:], out, log)
	}
	if len(args) == 0 || args[0] != "inspect" {
		return fmt.Errorf("%w: engine plugin inspect [-o json|table] FILE.wasm", errUsage)
	}
	fs := flag.NewFlagSet("plugin inspect", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&asJSON, "json", asJSON, "print JSON")
	outputFlag(fs, &asJSON)
	timeout := fs.Duration("timeout", 60*time.Second, "time limit of each call into the plugin")
	if err := fs.Parse(args[1:]); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%w: engine plugin inspect [-o json|table] FILE.wasm", errUsage)
	}
	info, err := wasmhost.Inspect(ctx, fs.Arg(0), wasmhost.Options{
		CallTimeout: *timeout,
		CacheDir:    pluginCacheDir(),
		Logger:      log,
	})
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(out, info)
	}
	printInfo(out, info)
	return nil
}

func printInfo(out io.Writer, info wasmhost.Info) {
	none := func(s []string) string {
		if len(s) == 0 {
			return "none"
		}
		return strings.Join(s, ", ")
	}
	version := info.Version
	if version == "" {
		version = "unknown"
	}
	ops := make([]string, len(info.Operations))
	for i, op := range info.Operations {
		ops[i] = strings.TrimPrefix(op, "rpengine_")
	}
	fmt.Fprintf(out, "abi version:   %d\n", info.ABIVersion)
	fmt.Fprintf(out, "name:          %s\n", info.Name)
	fmt.Fprintf(out, "version:       %s\n", version)
	fmt.Fprintf(out, "capabilities:  %s\n", none(ops))
	fmt.Fprintf(out, "host imports:  %s\n", none(info.Imports))
	fmt.Fprintf(out, "services:      %s\n", serviceList(info.Services))
	fmt.Fprintf(out, "sha256:        %s\n", info.SHA256)
}

// pluginCacheDir is where compiled plugins are kept when the config does
// not say: the user's cache directory.
func pluginCacheDir() string {
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "rpengine", "wazero")
	}
	return ""
}
