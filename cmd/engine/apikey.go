package main

import (
	"crypto/hmac"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rpengine/rpengine/internal/config"
	"github.com/rpengine/rpengine/internal/ops"
)

// The daemon's API key (internal/ops/apiproof.go): written fresh at each
// start, mode 0600, beside the state file; `engine plan` and `engine
// explain` trust an answer on server.listen only when it proves the key.

// apiKeyPath is the key's file: beside engine.state_file, or in the
// default state directory named for the engine (the default state file's
// name depends on the Placement endpoint, which may come from the
// catalog); "" with engine.state_file = "none" (no key: the verbs compute
// their answers themselves).
func apiKeyPath(cfg *config.Config) string {
	switch cfg.Engine.StateFile {
	case "none":
		return ""
	case "":
		if p := defaultStateFile(cfg.Engine.ID, ""); p != "" {
			return filepath.Join(filepath.Dir(p), strings.ToLower(cfg.Engine.ID)+".api-key")
		}
		return ""
	}
	return cfg.Engine.StateFile + ".api-key"
}

// newAPIKey writes a fresh random key at path, readable by the daemon's
// user alone: a new file renamed over the old one, so no reader ever
// sees it part-written or under looser permissions.
func newAPIKey(path string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	key := []byte(rand.Text() + rand.Text())
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("the API key: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".api-key-*")
	if err != nil {
		return nil, fmt.Errorf("the API key: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil { // CreateTemp's mode already; said for the reader
		tmp.Close()
		return nil, fmt.Errorf("the API key: %w", err)
	}
	_, err = tmp.Write(key)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return nil, fmt.Errorf("the API key %s: %w", path, err)
	}
	return key, nil
}

// provedBy reports whether proof answers nonce under the key at path.
func provedBy(path, nonce, proof string) bool {
	if path == "" {
		return false
	}
	key, err := os.ReadFile(path)
	if err != nil || len(key) == 0 {
		return false
	}
	return hmac.Equal([]byte(proof), []byte(ops.Proof(key, nonce)))
}
