package doctest

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/config"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// key is one config key and its default as the code has it.
type key struct {
	name string
	def  reflect.Value
}

// keys walks the toml tags of v's struct type: tables recurse, maps and
// free-form tables ([plugin.config], [plugin.services]) are one key.
func keys(prefix string, v reflect.Value) []key {
	var out []key
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if tag == "" || tag == "-" || !f.IsExported() {
			continue
		}
		name := prefix + tag
		if f.Type.Kind() == reflect.Struct {
			out = append(out, keys(name+".", v.Field(i))...)
			continue
		}
		out = append(out, key{name, v.Field(i)})
	}
	return out
}

// minimal is the least config Parse accepts: every other key defaulted.
const minimal = "[plugin]\npath = \"x.wasm\"\n[placement]\nendpoint = \"http://placement\"\ntoken = \"admin\"\n"

// setByMinimal are the keys minimal sets: they have no default.
var setByMinimal = map[string]bool{"plugin.path": true, "placement.endpoint": true, "placement.token": true}

// appliedElsewhere are the keys the config leaves zero for the package
// that reads them to apply its own default: that default is the key's.
var appliedElsewhere = map[string]any{
	"placement.new_names_per_cycle": engine.DefaultNewNames,
	"plugin.max_response":           config.Size(wasmhost.DefaultMaxResponse),
	"plugin.max_http_response":      config.Size(wasmhost.DefaultMaxHTTPResponse),
	"plugin.max_records":            wasmhost.DefaultMaxRecords,
	"plugin.max_field_length":       wasmhost.DefaultMaxField,
	"plugin.max_traits":             wasmhost.DefaultMaxTraits,
	"auth.interface":                "public", // internal/auth/options.go: "" is "public"
}

// derived are the keys whose default depends on another key (the engine
// id) or on the machine: the table says how, in words or a <pattern>.
var derived = map[string]bool{"nova.hold_project_id": true, "nova.hold_user_id": true, "events.queue": true,
	"nova.provider_config_location": true} // cmd/engine/nova.go, when unset

// Every config key is in docs/CONFIGURATION.md, and a default the code
// sets is the one the table shows.
func TestConfigKeysAreDocumented(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x.wasm"), []byte("\x00asm\x01\x00\x00\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(minimal, dir)
	if err != nil {
		t.Fatal(err)
	}
	rows := tableRows(doc(t, "docs/CONFIGURATION.md"))
	all := keys("", reflect.ValueOf(*cfg))
	if len(all) < 50 {
		t.Fatalf("only %d keys found: the walk is broken", len(all))
	}
	for _, k := range all {
		if v, ok := appliedElsewhere[k.name]; ok && k.def.IsZero() {
			k.def = reflect.ValueOf(v)
		}
		row, ok := rows[k.name]
		if !ok {
			t.Errorf("config key %s is not in docs/CONFIGURATION.md", k.name)
			continue
		}
		if setByMinimal[k.name] || derived[k.name] {
			continue
		}
		if len(row) < 2 {
			t.Errorf("config key %s: its row has no default column", k.name)
			continue
		}
		if msg := sameDefault(k.def, row[1]); msg != "" {
			t.Errorf("config key %s: docs/CONFIGURATION.md says default %s, %s", k.name, row[1], msg)
		}
	}
}

// sameDefault compares the code's default v with the table's cell; ""
// when they agree. A zero default needs no literal in the cell.
func sameDefault(v reflect.Value, cell string) string {
	m := backticked.FindStringSubmatch(cell)
	if v.IsZero() && (m == nil || !literal(m[1])) {
		return ""
	}
	if m == nil {
		return "the code " + display(v)
	}
	text := strings.Trim(m[1], `"`)
	var same bool
	switch d := v.Interface().(type) {
	case config.Duration:
		p, err := time.ParseDuration(text)
		same = err == nil && p == d.D()
	case config.Size:
		var s config.Size
		same = s.UnmarshalText([]byte(text)) == nil && s == d
	case string:
		same = text == d
	case bool:
		same = text == strconv.FormatBool(d)
	case int, int64, uint64, float64:
		same = text == fmt.Sprint(d)
	default:
		return ""
	}
	if !same {
		return "the code " + display(v)
	}
	return ""
}

// display is v as the table would write it.
func display(v reflect.Value) string {
	switch d := v.Interface().(type) {
	case config.Duration:
		return d.D().String()
	case config.Size:
		return fmt.Sprintf("%d bytes", d)
	}
	return fmt.Sprint(v.Interface())
}

// literal says whether a backticked cell is a TOML value, not a word.
func literal(s string) bool {
	if strings.HasPrefix(s, `"`) || s == "true" || s == "false" {
		return true
	}
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}
