package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/rpengine/rpengine/hostabi"
)

// version is the release this source tree is: the one version source.
// The Makefile, scripts/release (the Debian package, the image labels)
// and CHANGELOG.md read it from here; bump it when cutting a release
// (docs/RELEASE.md). A packager may override it at link time with
// -ldflags "-X main.version=...".
var version = "0.2.0"

// release is "true" only in a build of a commit tagged v<version>
// (scripts/release/release.sh sets it at link time); any other build's
// version ends in "-dev", so a binary never claims a release it is not.
var release = "false"

// commit is set at link time (-ldflags "-X main.commit=..."; the Makefile
// and make release do) because builds here run with -buildvcs=false, and
// a source tarball has no VCS; without either it stays "unknown". A Go
// VCS stamp, when present, wins: it cannot be stale.
var commit = "unknown"

// modified is "true" when the build's tree differed from commit (set at
// link time like commit).
var modified = "false"

// buildVersion is the engine's version, commit and the parts it is built
// from, for --version and rpengine_build_info.
type buildVersion struct {
	Version, Commit, Go, Wazero string
	Modified                    bool
	ABI                         int
}

func readVersion() buildVersion {
	v := buildVersion{Version: versionString(version, release == "true"), Commit: commit, Modified: modified == "true",
		Go: runtime.Version(), Wazero: "unknown", ABI: hostabi.Version}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
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
	fmt.Fprintf(w, "%s %s\ncommit:      %s\ngo:          %s\nwazero:      %s\nplugin ABI:  v%d\n",
		prog, v.Version, commit, v.Go, v.Wazero, v.ABI)
}

// versionString is the version as --version says it: "0.2.0" for a
// release build, "0.2.0-dev" for any other.
func versionString(v string, tagged bool) string {
	if tagged {
		return v
	}
	return v + "-dev"
}
