package wasmhost

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// pinned returns wasm's digest, refusing the module when want (a pin,
// plugin.sha256) is set and differs: a replaced file never runs, neither
// at load nor at a reload or a plugin host restart.
func pinned(wasm []byte, want string) (string, error) {
	sum := sha256.Sum256(wasm)
	got := hex.EncodeToString(sum[:])
	if want != "" && !strings.EqualFold(got, want) {
		return got, failure(KindRefused, "file's sha256 is %s, not %s as plugin.sha256 pins: refused", got, Printable(want))
	}
	return got, nil
}

// ValidSHA256 reports whether s is a sha256 digest in hex.
func ValidSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}
