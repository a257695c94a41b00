package config

import (
	"fmt"
	"os"
	"strings"

	"github.com/BurntSushi/toml"
)

// maxIDLength keeps the owner marker, CUSTOM_RPENGINE_OWNER_ and the id,
// within Placement's 255 characters of a trait name.
const maxIDLength = 255 - len("CUSTOM_RPENGINE_OWNER_")

// checkID checks engine.id. It names files (nova-config's provider
// config, the state file) and the owner marker, so it is one plain word:
// letters, digits, '_', '-' and '.', not starting with a dot. "az-1.rack/a"
// would put a directory in nova-config's file name.
func checkID(id string) []error {
	switch {
	case id == "":
		return []error{fmt.Errorf("engine.id: must not be empty")}
	case len(id) > maxIDLength:
		return []error{fmt.Errorf("engine.id: %d characters; at most %d (the owner marker trait must fit Placement's 255)", len(id), maxIDLength)}
	case strings.HasPrefix(id, "."):
		return []error{fmt.Errorf("engine.id %q: must not start with a dot (it names files)", id)}
	}
	for _, r := range id {
		if !idChar(r) {
			return []error{fmt.Errorf("engine.id %q: %q not allowed: use letters, digits, '_', '-' and '.' (it names files and the owner marker)", id, r)}
		}
	}
	return nil
}

func idChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.'
}

// PeekLog is [log] format and file of the config file at path, read
// alone, so that a verb's logger is built before the config is checked;
// "" for either when the file cannot be read or parsed, or says nothing.
func PeekLog(path string) (format, file string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", ""
	}
	var c struct {
		Log Log `toml:"log"`
	}
	if _, err := toml.Decode(string(b), &c); err != nil {
		return "", ""
	}
	return c.Log.Format, c.Log.File
}

// PeekServer is [server] of the config file at path, read alone with the
// defaults: what `engine healthcheck` needs of a config the daemon has
// already checked.
func PeekServer(path string) (Server, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Server{}, err
	}
	c := struct {
		Server Server `toml:"server"`
	}{defaults().Server}
	if _, err := toml.Decode(string(b), &c); err != nil {
		return Server{}, fmt.Errorf("%s: %w", path, err)
	}
	return c.Server, nil
}

// PeekID is engine.id of the config file at path, read alone, so that a
// verb's log records name the engine before the config is checked; ""
// when the file cannot be read or parsed (the verb then says why).
func PeekID(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var c struct {
		Engine struct {
			ID *string `toml:"id"`
		} `toml:"engine"`
	}
	if _, err := toml.Decode(string(b), &c); err != nil {
		return ""
	}
	if c.Engine.ID == nil {
		return defaults().Engine.ID
	}
	return *c.Engine.ID
}
