package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// uid is the image's user: not root, and no user of a usual host.
const uid = 65532

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

type spec struct {
	out, version, revision, plugins, config, ca string
	created                                     time.Time
	bins, docs                                  list
}

func build(args []string) error {
	var s spec
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	fs.StringVar(&s.out, "out", "", "the oci-archive to write")
	fs.StringVar(&s.version, "version", "", "the release version (label; ref name localhost/rpengine:VERSION)")
	fs.StringVar(&s.revision, "revision", "", "the commit (label)")
	fs.StringVar(&s.plugins, "plugins", "", "directory of the .wasm plugins")
	fs.StringVar(&s.config, "config", "", "the default /etc/rpengine/rpengine.toml")
	fs.StringVar(&s.ca, "ca", "", "the CA bundle for /etc/ssl/certs/ca-certificates.crt (Debian's ca-certificates)")
	epoch := fs.Int64("created", 0, "creation time, Unix seconds (SOURCE_DATE_EPOCH)")
	fs.Var(&s.bins, "bin", "OS/ARCH=PATH of the engine binary (repeat per platform)")
	fs.Var(&s.docs, "doc", "a file for /usr/share/doc/rpengine (repeat)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if s.out == "" || s.version == "" || len(s.bins) == 0 || s.config == "" || s.ca == "" {
		return fmt.Errorf("build needs -out, -version, -config, -ca and at least one -bin")
	}
	s.created = time.Unix(*epoch, 0).UTC()
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, b := range s.bins {
		platform, path, ok := strings.Cut(b, "=")
		goos, arch, ok2 := strings.Cut(platform, "/")
		if !ok || !ok2 {
			return fmt.Errorf("-bin %q: want OS/ARCH=PATH", b)
		}
		img, err := s.image(goos, arch, path)
		if err != nil {
			return err
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: goos, Architecture: arch}}})
	}
	return s.write(idx)
}

// image is the image of one platform.
func (s spec) image(goos, arch, bin string) (v1.Image, error) {
	layerTar, err := s.layer(bin)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer, History: v1.History{
		Created: v1.Time{Time: s.created}, CreatedBy: "scripts/release/tools/ociimage", Comment: "rpengine " + s.version}})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Created = goos, arch, v1.Time{Time: s.created}
	cf.Config = s.runConfig()
	return mutate.ConfigFile(img, cf)
}

// configPath is the config the image runs with: its own default, or the
// operator's mounted over /etc/rpengine.
const configPath = "/etc/rpengine/rpengine.toml"

// healthcheck runs the binary's own probe, so the image needs no shell or
// curl: docker and podman (docker format) run it; kolla and Kubernetes set
// their own, calling the same verb or the same paths.
func healthcheck() *v1.HealthConfig {
	return &v1.HealthConfig{
		Test:        []string{"CMD", "/usr/bin/rpengine", "healthcheck", "live", "--config", configPath},
		Interval:    30 * time.Second,
		Timeout:     10 * time.Second, // the verb gives up after 5 s
		StartPeriod: 60 * time.Second,
		Retries:     3,
	}
}

func (s spec) runConfig() v1.Config {
	return v1.Config{
		User:         strconv.Itoa(uid) + ":" + strconv.Itoa(uid),
		Entrypoint:   []string{"/usr/bin/rpengine"},
		Cmd:          []string{"run", "--config", configPath},
		Env:          []string{"PATH=/usr/bin", "XDG_CACHE_HOME=/var/cache"},
		WorkingDir:   "/var/lib/rpengine",
		Volumes:      map[string]struct{}{"/etc/rpengine": {}, "/var/lib/rpengine": {}, "/var/cache/rpengine": {}},
		Healthcheck:  healthcheck(),
		ExposedPorts: map[string]struct{}{"9180/tcp": {}},
		StopSignal:   "SIGTERM",
		Labels: map[string]string{
			"org.opencontainers.image.title":         "rpengine",
			"org.opencontainers.image.description":   "Keeps OpenStack Placement matching the bare-metal inventory (Wasm plugins)",
			"org.opencontainers.image.version":       s.version,
			"org.opencontainers.image.revision":      s.revision,
			"org.opencontainers.image.created":       s.created.Format(time.RFC3339),
			"org.opencontainers.image.licenses":      "Apache-2.0",
			"org.opencontainers.image.vendor":        "The rpengine authors",
			"org.opencontainers.image.documentation": "/usr/share/doc/rpengine/README.md",
		},
	}
}

// entry is one file or directory of the layer.
type entry struct {
	name     string
	mode     int64
	owner    int
	data     []byte
	dir      bool
	fromPath string
}

// layer is the image's only layer as an uncompressed tar, in name order.
func (s spec) layer(bin string) ([]byte, error) {
	es := []entry{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/passwd", mode: 0o644, data: []byte(fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nrpengine:x:%d:%d:rpengine:/var/lib/rpengine:/sbin/nologin\n", uid, uid))},
		{name: "etc/group", mode: 0o644, data: []byte(fmt.Sprintf("root:x:0:\nrpengine:x:%d:\n", uid))},
		{name: "etc/rpengine/", mode: 0o755, dir: true},
		{name: "etc/rpengine/rpengine.toml", mode: 0o644, fromPath: s.config},
		{name: "etc/ssl/", mode: 0o755, dir: true},
		{name: "etc/ssl/certs/", mode: 0o755, dir: true},
		// Where Go's crypto/x509 looks first on Linux: https to a publicly
		// signed Keystone works without a mounted CA file.
		{name: "etc/ssl/certs/ca-certificates.crt", mode: 0o644, fromPath: s.ca},
		{name: "tmp/", mode: 0o1777, dir: true},
		{name: "usr/", mode: 0o755, dir: true},
		{name: "usr/bin/", mode: 0o755, dir: true},
		{name: "usr/bin/rpengine", mode: 0o755, fromPath: bin},
		{name: "usr/lib/", mode: 0o755, dir: true},
		{name: "usr/lib/rpengine/", mode: 0o755, dir: true},
		{name: "usr/share/", mode: 0o755, dir: true},
		{name: "usr/share/doc/", mode: 0o755, dir: true},
		{name: "usr/share/doc/rpengine/", mode: 0o755, dir: true},
		{name: "var/", mode: 0o755, dir: true},
		{name: "var/cache/", mode: 0o755, dir: true},
		{name: "var/cache/rpengine/", mode: 0o750, owner: uid, dir: true},
		{name: "var/lib/", mode: 0o755, dir: true},
		{name: "var/lib/rpengine/", mode: 0o750, owner: uid, dir: true},
	}
	if s.plugins != "" {
		wasm, err := filepath.Glob(filepath.Join(s.plugins, "*.wasm"))
		if err != nil {
			return nil, err
		}
		for _, w := range wasm {
			es = append(es, entry{name: "usr/lib/rpengine/" + filepath.Base(w), mode: 0o644, fromPath: w})
		}
	}
	for _, d := range s.docs {
		es = append(es, entry{name: "usr/share/doc/rpengine/" + filepath.Base(d), mode: 0o644, fromPath: d})
	}
	slices.SortFunc(es, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	return s.tar(es)
}

func (s spec) tar(es []entry) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range es {
		h := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.owner, Gid: e.owner, ModTime: s.created, Format: tar.FormatPAX}
		if e.dir {
			h.Typeflag = tar.TypeDir
		} else {
			data := e.data
			if e.fromPath != "" {
				b, err := os.ReadFile(e.fromPath)
				if err != nil {
					return nil, err
				}
				data = b
			}
			h.Typeflag, h.Size = tar.TypeReg, int64(len(data))
			e.data = data
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	err := tw.Close()
	return buf.Bytes(), err
}

// write writes idx as an OCI layout, then tars the layout to s.out.
func (s spec) write(idx v1.ImageIndex) error {
	dir, err := os.MkdirTemp("", "ociimage-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	// A full name, which the ref.name grammar allows: podman load names
	// the image by it (a bare "0.2.0" it refuses as a repository name).
	ref := map[string]string{"org.opencontainers.image.ref.name": "localhost/rpengine:" + s.version}
	if err := p.AppendIndex(idx, layout.WithAnnotations(ref)); err != nil {
		return err
	}
	return tarDir(dir, s.out, s.created)
}

// tarDir writes the files under dir to out in name order, with fixed
// owners and times.
func tarDir(dir, out string, t time.Time) error {
	var names []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && path != dir {
			names = append(names, path)
		}
		return err
	})
	if err != nil {
		return err
	}
	slices.Sort(names)
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	for _, n := range names {
		rel, _ := filepath.Rel(dir, n)
		st, err := os.Stat(n)
		if err != nil {
			return err
		}
		h := &tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, ModTime: t, Typeflag: tar.TypeReg, Size: st.Size(), Format: tar.FormatPAX}
		if st.IsDir() {
			h.Name, h.Mode, h.Typeflag, h.Size = h.Name+"/", 0o755, tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if !st.IsDir() {
			b, err := os.ReadFile(n)
			if err != nil {
				return err
			}
			if _, err := tw.Write(b); err != nil {
				return err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return f.Close()
}
