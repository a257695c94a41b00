package wasmhost

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rpengine/rpengine/hostabi"
)

// ungranted names the declared services that granted lacks, with what to
// grant for each, or returns "" when every one is granted. A plugin that
// declares nothing (nil) is not checked: it predates the declaration.
func ungranted(declared []hostabi.Service, granted map[string]string) string {
	var missing []string
	for _, s := range declared {
		if _, ok := granted[s.Name]; ok {
			continue
		}
		hint := "a URL"
		switch s.Type {
		case "":
		case s.Name:
			hint = `"catalog" or a URL`
		default:
			hint = fmt.Sprintf("%q or a URL", "catalog:"+s.Type)
		}
		missing = append(missing, fmt.Sprintf("%q (grant %s = %s)", s.Name, s.Name, hint))
	}
	if len(missing) == 0 {
		return ""
	}
	return fmt.Sprintf("the plugin calls service %s, not granted in [plugin.services] (granted: %s)",
		strings.Join(missing, ", "), grantedNames(granted))
}

func grantedNames(granted map[string]string) string {
	if len(granted) == 0 {
		return "none"
	}
	names := make([]string, 0, len(granted))
	for n := range granted {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
