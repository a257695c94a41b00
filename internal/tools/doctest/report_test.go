package doctest

import (
	"reflect"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/engine"
)

// jsonFields walks the JSON names of t's fields, into the engine's own
// types (structs, and their slices, maps and pointers); embedded structs
// add their fields. Placement's types (inventories) are Placement's API.
func jsonFields(t reflect.Type, seen map[reflect.Type]bool, out map[string]string) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] || !strings.HasPrefix(t.PkgPath(), "github.com/rpengine/rpengine/engine") ||
		strings.HasPrefix(t.PkgPath(), "github.com/rpengine/rpengine/engine/placement") {
		return
	}
	seen[t] = true
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" {
			jsonFields(f.Type, seen, out)
			continue
		}
		if name == "-" || !f.IsExported() || name == "" {
			continue
		}
		out[name] = t.Name() + "." + f.Name
		jsonFields(f.Type, seen, out)
	}
}

// Every field of the report (once --json, plan --json, the API's
// cycles) is in docs/REPORT.md, in the first column of a table.
func TestReportFieldsAreDocumented(t *testing.T) {
	fields := map[string]string{}
	seen := map[reflect.Type]bool{}
	for _, v := range []any{engine.Report{}, engine.OnlyReport{}} {
		jsonFields(reflect.TypeOf(v), seen, fields)
	}
	if len(fields) < 30 {
		t.Fatalf("only %d fields found: the walk is broken", len(fields))
	}
	rows := tableRows(doc(t, "docs/REPORT.md"))
	for name, field := range fields {
		if _, ok := rows[name]; !ok {
			t.Errorf("report field %s (%s) is not in docs/REPORT.md", name, field)
		}
	}
}
