package config

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// credentialsDir is systemd's $CREDENTIALS_DIRECTORY (LoadCredential=,
// SetCredentialEncrypted=): files only the service can read.
const credentialsDir = "CREDENTIALS_DIRECTORY"

// Systemd credential names read when [auth] gives neither the secret
// nor its file.
const (
	credPassword = "keystone-password"
	credAppCred  = "keystone-application-credential-secret"
)

// secretFile is one [auth] secret that may come from a file.
type secretFile struct {
	key, fileKey, cred string
	value, file        *string
}

func (a *Auth) secretFiles() []secretFile {
	return []secretFile{
		{"password", "password_file", credPassword, &a.Password, &a.PasswordFile},
		{"application_credential_secret", "application_credential_secret_file", credAppCred,
			&a.ApplicationCredentialSecret, &a.ApplicationCredentialSecretFile},
	}
}

// readSecrets fills [auth]'s secrets from their files: password_file and
// application_credential_secret_file (a path; "$CREDENTIALS_DIRECTORY/"
// in front names systemd's directory), else, for the method that needs
// one, the systemd credential keystone-password or
// keystone-application-credential-secret if it exists.
func (c *Config) readSecrets(dir string) error {
	need := map[string]string{"password": "password", "application_credential": "application_credential_secret"}[c.Auth.Method]
	for _, s := range c.Auth.secretFiles() {
		if *s.file != "" && *s.value != "" {
			return fmt.Errorf("auth.%s and auth.%s are exclusive", s.key, s.fileKey)
		}
		path := expandCredentials(*s.file, dir)
		if path == "" && *s.value == "" && s.key == need {
			if d := os.Getenv(credentialsDir); d != "" {
				if p := filepath.Join(d, s.cred); exists(p) {
					path = p
				}
			}
		}
		if path == "" {
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("auth.%s: %w", s.fileKey, err)
		}
		*s.value = strings.TrimRight(string(b), "\r\n")
		*s.file = path
		c.secretFiles = append(c.secretFiles, path)
	}
	return nil
}

// expandCredentials resolves a secret file's path: "$CREDENTIALS_DIRECTORY/x"
// (or "${CREDENTIALS_DIRECTORY}/x") under systemd's directory, a relative
// path under the config's.
func expandCredentials(p, dir string) string {
	for _, v := range []string{"$" + credentialsDir, "${" + credentialsDir + "}"} {
		if rest, ok := strings.CutPrefix(p, v); ok {
			return filepath.Join(os.Getenv(credentialsDir), rest)
		}
	}
	if p != "" && !filepath.IsAbs(p) {
		return filepath.Join(dir, p)
	}
	return p
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Warnings are what Load found unsafe but not wrong: a file holding a
// secret that other users can read.
func (c *Config) Warnings() []string { return c.warnings }

// warnReadable notes each file holding a secret that is readable by
// others: the config itself when it holds one inline, the secret files,
// clouds.yaml, etcd's client key.
func (c *Config) warnReadable(path string) {
	var files []string
	if c.holdsSecret() {
		files = append(files, path)
	}
	files = append(files, c.secretFiles...)
	if c.Auth.CloudsFile != "" {
		files = append(files, c.Auth.CloudsFile)
	}
	if c.Coord.KeyFile != "" { // etcd's client key
		files = append(files, c.Coord.KeyFile)
	}
	for _, g := range c.Plugin.Grants {
		if g.PasswordFile != "" {
			files = append(files, g.PasswordFile)
		}
	}
	for _, f := range files {
		fi, err := os.Stat(f)
		if err == nil && fi.Mode().Perm()&0o004 != 0 {
			c.warnings = append(c.warnings, fmt.Sprintf("%s holds a credential and is readable by every user (mode %s): chmod o-r it",
				f, fi.Mode().Perm()&fs.ModePerm))
		}
	}
}

// holdsSecret reports a secret written in the config file itself.
func (c *Config) holdsSecret() bool {
	a := c.Auth
	if a.Password != "" && a.PasswordFile == "" || a.ApplicationCredentialSecret != "" && a.ApplicationCredentialSecretFile == "" {
		return true
	}
	if c.Placement.Token != "" && c.Placement.Token != "admin" { // noauth2's fixed token is no secret
		return true
	}
	for _, g := range c.Plugin.Grants {
		if g.Password != "" && g.PasswordFile == "" {
			return true
		}
	}
	return false
}
