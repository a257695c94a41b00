package main

import (
	"flag"
	"fmt"
	"strings"
)

// didYouMean is ` (did you mean "X"?)` for the candidate nearest to word
// within a third of its length in edits (at least 1, at most 3), or "".
func didYouMean(word string, candidates []string) string {
	best, bestD := "", min(3, max(1, len(word)/3))+1
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(word), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" {
		return ""
	}
	return ` (did you mean "` + best + `"?)`
}

// editDistance is the optimal string alignment distance between a and
// b (Levenshtein's, with a swap of two neighbours one edit: "onec" is one
// from "once"), in bytes: the words here are ASCII verbs, flags and keys.
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

func verbNames() []string {
	names := make([]string, 0, len(verbs))
	for _, v := range verbs {
		names = append(names, v.name)
	}
	return names
}

// flagSuggestion is the hint for a flag the flag package refused as not
// defined (its error: "flag provided but not defined: -name"), or "".
func flagSuggestion(err error, fs *flag.FlagSet) string {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: ")
	if !ok {
		return ""
	}
	name = strings.TrimLeft(name, "-")
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if s := didYouMean(name, names); s != "" {
		return "--" + name + ":" + strings.Replace(s, `"`, `"--`, 1)
	}
	return ""
}

// outputFlag registers -o json|table on a subcommand's own flag set (the
// verbs' -o is flagSet's): json sets *asJSON.
func outputFlag(fs *flag.FlagSet, asJSON *bool) {
	fs.Func("o", "output: json or table", func(s string) error {
		switch s {
		case "json":
			*asJSON = true
		case "table":
			*asJSON = false
		default:
			return fmt.Errorf("-o %q: want json or table", s)
		}
		return nil
	})
}
