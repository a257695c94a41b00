package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/rpengine/rpengine/hostabi"
)

// buildVersion is the engine's version: the module's (a tagged build),
// else "devel"; the commit comes from the VCS stamp Go adds.
type buildVersion struct {
	Version, Commit, Go, Wazero string
	Modified                    bool
	ABI                         int
}

// commit may be set at link time (-ldflags "-X main.commit=...") where
// the build has no VCS stamp (GOFLAGS=-buildvcs=false, a source tarball).
var commit = "unknown"

func readVersion() buildVersion {
	v := buildVersion{Version: "devel", Commit: commit, Go: runtime.Version(), Wazero: "unknown", ABI: hostabi.Version}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if mv := bi.Main.Version; mv != "" && mv != "(devel)" {
		v.Version = mv
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	for _, d := range bi.Deps {
		if d.Path == "github.com/tetratelabs/wazero" {
			v.Wazero = d.Version
			if d.Replace != nil {
				v.Wazero = d.Replace.Version
			}
		}
	}
	return v
}

func printVersion(w io.Writer) {
	v := readVersion()
	commit := v.Commit
	if v.Modified {
		commit += " (modified)"
	}
	fmt.Fprintf(w, "engine %s\ncommit:      %s\ngo:          %s\nwazero:      %s\nplugin ABI:  v%d\n",
		v.Version, commit, v.Go, v.Wazero, v.ABI)
}
