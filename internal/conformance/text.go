package conformance

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/rpengine/rpengine/hostabi"
)

// maxQuote bounds any value from the plugin quoted in a result.
const maxQuote = 80

// cut shortens s to maxQuote bytes for quoting.
func cut(s string) string {
	if len(s) <= maxQuote {
		return s
	}
	return s[:maxQuote] + fmt.Sprintf("…(%d bytes)", len(s))
}

// examples joins the first three messages and counts the rest.
func examples(msgs []string) string {
	const n = 3
	out := make([]string, 0, n+1)
	for _, m := range msgs[:min(n, len(msgs))] {
		out = append(out, cut(m))
	}
	if len(msgs) > n {
		out = append(out, fmt.Sprintf("and %d more", len(msgs)-n))
	}
	return strings.Join(out, "; ")
}

// byUUID maps records to their JSON by key.
func byUUID[T any](items []T, key func(T) string) map[string]string {
	m := make(map[string]string, len(items))
	for _, it := range items {
		b, _ := json.Marshal(it)
		m[key(it)] = string(b)
	}
	return m
}

// diff describes how b differs from a, or "" when they agree.
func diff(a, b map[string]string) string {
	var msgs []string
	for _, k := range slices.Sorted(maps.Keys(a)) {
		switch v, ok := b[k]; {
		case !ok:
			msgs = append(msgs, k+" missing from the second")
		case v != a[k]:
			msgs = append(msgs, fmt.Sprintf("%s was %s, now %s", k, cut(a[k]), cut(v)))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(b)) {
		if _, ok := a[k]; !ok {
			msgs = append(msgs, k+" new in the second")
		}
	}
	if len(msgs) == 0 {
		return ""
	}
	return examples(msgs)
}

func serviceNames(s []hostabi.Service) string {
	names := make([]string, len(s))
	for i, svc := range s {
		names[i] = cut(svc.Name)
	}
	return strings.Join(names, " ")
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
