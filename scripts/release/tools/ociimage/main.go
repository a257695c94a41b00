// Command ociimage builds rpengine's OCI image without a container daemon,
// with go-containerregistry: one static layer per architecture (the engine,
// the plugins, a default config, the CA bundle, the licences, a passwd
// entry for the non-root user), OCI labels, a health check running the
// binary, /etc/rpengine, /var/lib/rpengine and /var/cache/rpengine as
// volumes, written as an OCI image layout in a tar (an oci-archive, which
// podman and skopeo load). Every timestamp is -created, so two builds of
// the same inputs are identical.
//
//	ociimage build -out IMAGE.tar -version V -revision C -created EPOCH \
//	    -bin linux/amd64=PATH -bin linux/arm64=PATH -plugins DIR -config FILE -ca FILE -doc FILE...
//	ociimage unpack -in IMAGE.tar -platform linux/amd64 -dir DIR
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: ociimage build|unpack [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "build":
		err = build(os.Args[2:])
	case "unpack":
		err = unpack(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q: want build or unpack", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ociimage:", err)
		os.Exit(1)
	}
}
