package config

import (
	"reflect"
	"strings"
)

// Nearest is the candidate nearest to word, within a third of its length
// in edits (at least 1, at most 3), or "": the "did you mean" of a
// mistyped config key, verb or flag. Case is ignored.
func Nearest(word string, candidates []string) string {
	best, bestD := "", min(3, max(1, len(word)/3))+1
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(word), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance between a and
// b (Levenshtein's, with a swap of two neighbours one edit: "onec" is one
// from "once"), in bytes: the words here are ASCII.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// knownKeys lists every key Config decodes ("engine.interval"), from its
// toml tags: the candidates of an unknown key's suggestion.
func knownKeys() []string {
	var out []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
			if name == "" || name == "-" || !f.IsExported() {
				continue
			}
			ft := f.Type
			for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
				ft = ft.Elem()
			}
			out = append(out, prefix+name)
			if ft.Kind() == reflect.Struct && ft.PkgPath() == t.PkgPath() {
				walk(ft, prefix+name+".")
			}
		}
	}
	walk(reflect.TypeFor[Config](), "")
	return out
}
