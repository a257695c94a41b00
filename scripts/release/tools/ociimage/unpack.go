package main

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// unpack checks the image of one platform in an oci-archive (non-root
// user, the volumes, the labels) and extracts its filesystem to -dir, for
// a machine that cannot run containers: the test then runs the binary.
func unpack(args []string) error {
	fs := flag.NewFlagSet("unpack", flag.ContinueOnError)
	in := fs.String("in", "", "the oci-archive")
	platform := fs.String("platform", "linux/amd64", "OS/ARCH of the image to take")
	dir := fs.String("dir", "", "where to extract its filesystem")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *in == "" || *dir == "" {
		return errors.New("unpack needs -in and -dir")
	}
	tmp, err := os.MkdirTemp("", "ociimage-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := untar(*in, tmp, false); err != nil {
		return err
	}
	img, err := pick(tmp, *platform)
	if err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	if err := checkConfig(cf.Config); err != nil {
		return err
	}
	out, _ := json.MarshalIndent(cf.Config, "", "  ")
	fmt.Println(string(out))
	rc := mutate.Extract(img)
	defer rc.Close()
	return extract(rc, *dir)
}

// pick finds the image of platform under the layout's (only) index.
func pick(dir, platform string) (v1.Image, error) {
	top, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, err
	}
	tm, err := top.IndexManifest()
	if err != nil || len(tm.Manifests) != 1 {
		return nil, fmt.Errorf("index.json: want one index (err %v)", err)
	}
	idx, err := top.ImageIndex(tm.Manifests[0].Digest)
	if err != nil {
		return nil, err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, m := range im.Manifests {
		if m.Platform != nil && m.Platform.OS+"/"+m.Platform.Architecture == platform {
			return idx.Image(m.Digest)
		}
	}
	return nil, fmt.Errorf("no image for %s", platform)
}

func checkConfig(c v1.Config) error {
	var bad []string
	if c.User == "" || c.User == "0" || strings.HasPrefix(c.User, "0:") || strings.HasPrefix(c.User, "root") {
		bad = append(bad, fmt.Sprintf("user %q is root", c.User))
	}
	for _, v := range []string{"/etc/rpengine", "/var/lib/rpengine", "/var/cache/rpengine"} {
		if _, ok := c.Volumes[v]; !ok {
			bad = append(bad, "no volume "+v)
		}
	}
	for _, l := range []string{"org.opencontainers.image.version", "org.opencontainers.image.revision", "org.opencontainers.image.licenses"} {
		if c.Labels[l] == "" {
			bad = append(bad, "no label "+l)
		}
	}
	if h := c.Healthcheck; h == nil || len(h.Test) < 3 || h.Test[0] != "CMD" || h.Test[2] != "healthcheck" {
		bad = append(bad, fmt.Sprintf("health check %v does not run the binary's healthcheck verb", c.Healthcheck))
	}
	if len(bad) > 0 {
		return errors.New("image config: " + strings.Join(bad, "; "))
	}
	return nil
}

func untar(path, dir string, owners bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return extractOwners(f, dir, owners)
}

func extract(r io.Reader, dir string) error { return extractOwners(r, dir, os.Geteuid() == 0) }

// extractOwners writes a tar's directories and regular files under dir,
// refusing names that leave it; owners keeps the tar's uids (as root).
func extractOwners(r io.Reader, dir string, owners bool) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
		name := filepath.Join(dir, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(name, os.FileMode(h.Mode).Perm()|os.ModeDir)
			if err == nil {
				err = os.Chmod(name, os.FileMode(h.Mode&0o7777)|modeBits(h.Mode))
			}
		case tar.TypeReg:
			err = writeFile(name, tr, os.FileMode(h.Mode).Perm())
		default:
			return fmt.Errorf("%s: unexpected tar entry type %q", h.Name, h.Typeflag)
		}
		if err == nil && owners {
			err = os.Lchown(name, h.Uid, h.Gid)
		}
		if err != nil {
			return err
		}
	}
}

func modeBits(m int64) os.FileMode {
	var fm os.FileMode
	if m&0o1000 != 0 {
		fm |= os.ModeSticky
	}
	return fm
}

func writeFile(name string, r io.Reader, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
