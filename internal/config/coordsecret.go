package config

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/rpengine/rpengine/internal/redact"
)

// credEtcdPassword is the systemd credential read for coord.user's
// password when coord.password_file is not given.
const credEtcdPassword = "etcd-password"

// EtcdPassword is coord.user's password, read from coord.password_file
// (or the systemd credential etcd-password) at load; never in the file.
func (k Coord) EtcdPassword() string { return k.password }

// readCoordPassword reads coord.password_file: a path, relative to the
// config's directory or under "$CREDENTIALS_DIRECTORY/"; without it, the
// systemd credential etcd-password when coord.user is set.
func (c *Config) readCoordPassword(dir string) error {
	k := &c.Coord
	k.CAFile, k.CertFile, k.KeyFile = expandCredentials(k.CAFile, dir), expandCredentials(k.CertFile, dir), expandCredentials(k.KeyFile, dir)
	path := expandCredentials(k.PasswordFile, dir)
	if path == "" && k.User != "" {
		if d := os.Getenv(credentialsDir); d != "" && exists(filepath.Join(d, credEtcdPassword)) {
			path = filepath.Join(d, credEtcdPassword)
		}
	}
	if path == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("coord.password_file: %w", err)
	}
	k.password = strings.TrimRight(string(b), "\r\n")
	k.PasswordFile = path
	c.secretFiles = append(c.secretFiles, path)
	if k.password == "" {
		return fmt.Errorf("coord.password_file: %s is empty", path)
	}
	return nil
}

// checkCoordAccess checks coord's TLS and user keys: each file given
// exists, a certificate comes with its key, and a password goes only
// over TLS.
func (c *Config) checkCoordAccess() []error {
	k := c.Coord
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("coord.%s: "+format, append([]any{key}, args...)...))
	}
	for _, f := range [][2]string{{"ca_file", k.CAFile}, {"cert_file", k.CertFile}, {"key_file", k.KeyFile}} {
		if f[1] != "" && !exists(f[1]) {
			bad(f[0], "%s does not exist", f[1])
		}
	}
	if (k.CertFile == "") != (k.KeyFile == "") {
		bad("cert_file", "and coord.key_file go together")
	}
	switch {
	case k.User == "" && k.password != "":
		bad("password_file", "needs coord.user")
	case k.User != "" && k.password == "":
		bad("user", "needs coord.password_file (or the systemd credential %s)", credEtcdPassword)
	}
	tlsKeys := k.CAFile != "" || k.CertFile != ""
	for _, e := range k.Etcd {
		u, err := url.Parse(e)
		if err != nil || u.Scheme != "http" {
			continue
		}
		if k.User != "" {
			bad("user", "would send its password in clear to %s: use https:// endpoints", redact.URL(e))
		} else if tlsKeys {
			bad("etcd", "%s is plain http, but coord's TLS files are given: use https://", redact.URL(e))
		}
		break
	}
	if len(k.Etcd) == 0 && (tlsKeys || k.User != "") {
		bad("etcd", "is required with coord's TLS files or coord.user")
	}
	return errs
}
