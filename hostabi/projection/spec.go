package projection

import (
	"fmt"

	"github.com/rpengine/rpengine/hostabi"
)

var kindNames = map[Kind]string{
	KindString:  hostabi.ProjectString,
	KindBool:    hostabi.ProjectBool,
	KindStrings: hostabi.ProjectStrings,
	KindRaw:     hostabi.ProjectRaw,
}

// ToSpec is p as a plugin puts it in an HTTP request head.
func ToSpec(p Projection) (hostabi.ProjectSpec, error) {
	s := hostabi.ProjectSpec{Array: p.Array}
	var err error
	if s.Fields, err = toFields(p.Fields); err != nil {
		return s, err
	}
	s.Top, err = toFields(p.Top)
	return s, err
}

func toFields(fs []Field) ([]hostabi.ProjectField, error) {
	if len(fs) == 0 {
		return nil, nil
	}
	out := make([]hostabi.ProjectField, len(fs))
	for i, f := range fs {
		name, ok := kindNames[f.Kind]
		if !ok {
			return nil, fmt.Errorf("json projection: field %q has no valid kind", f.Name)
		}
		out[i] = hostabi.ProjectField{Name: f.Name, Kind: name}
	}
	return out, nil
}

// FromSpec reads a plugin's spec, refusing an unknown kind, a name given
// twice in one list and more than hostabi.MaxProjectFields fields.
func FromSpec(s hostabi.ProjectSpec) (Projection, error) {
	p := Projection{Array: s.Array}
	var err error
	if p.Fields, err = fromFields("fields", s.Fields); err != nil {
		return p, err
	}
	p.Top, err = fromFields("top", s.Top)
	return p, err
}

func fromFields(list string, fs []hostabi.ProjectField) ([]Field, error) {
	if len(fs) > hostabi.MaxProjectFields {
		return nil, fmt.Errorf("projection: %d %s, more than %d", len(fs), list, hostabi.MaxProjectFields)
	}
	out := make([]Field, len(fs))
	seen := make(map[string]bool, len(fs))
	for i, f := range fs {
		k := Kind(0)
		for kind, name := range kindNames {
			if name == f.Kind {
				k = kind
			}
		}
		switch {
		case k == 0:
			return nil, fmt.Errorf("projection: %s[%d] %q: kind %q is not string, bool, strings or raw", list, i, clip(f.Name), clip(f.Kind))
		case seen[f.Name]:
			return nil, fmt.Errorf("projection: %s[%d]: %q is named twice", list, i, clip(f.Name))
		}
		seen[f.Name] = true
		out[i] = Field{Name: f.Name, Kind: k}
	}
	return out, nil
}

// clip keeps a name quoted in an error short: it comes from a plugin.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
