package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/rpengine/rpengine/internal/config"
)

// didYouMean is ` (did you mean "X"?)` for the candidate nearest to word
// (config.Nearest), or "".
func didYouMean(word string, candidates []string) string {
	best := config.Nearest(word, candidates)
	if best == "" {
		return ""
	}
	return ` (did you mean "` + best + `"?)`
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
