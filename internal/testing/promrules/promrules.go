// Package promrules checks the engine's alerting rules
// (deploy/monitoring/rpengine.rules.yml) against what a running engine
// exposes: samples scraped from its /metrics become the input series of
// a promtool rules unit test, so an alert is shown to fire on the
// engine's own series, not only on series written by hand. It is for
// tests only; it never changes the rules file.
package promrules

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/testenv"
)

// RulesFile is the rules file, relative to the repository.
const RulesFile = "deploy/monitoring/rpengine.rules.yml"

// Sample is one scraped series: its name, its labels as the exposition
// writes them ({kind="reserved"}, or ""), and its value.
type Sample struct {
	Name, Labels string
	Value        float64
}

// Scrape reads the text exposition at url and returns the samples whose
// name starts with prefix.
func Scrape(url, prefix string) ([]Sample, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape %s: %s", url, resp.Status)
	}
	var out []Sample
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		cut := strings.LastIndexByte(line, ' ')
		if cut < 0 {
			return nil, fmt.Errorf("scrape %s: unreadable line %q", url, line)
		}
		v, err := strconv.ParseFloat(line[cut+1:], 64)
		if err != nil {
			return nil, fmt.Errorf("scrape %s: line %q: %w", url, line, err)
		}
		series := line[:cut]
		name, labels, _ := strings.Cut(series, "{")
		if labels != "" {
			labels = "{" + labels
		}
		out = append(out, Sample{Name: name, Labels: labels, Value: v})
	}
	return out, sc.Err()
}

// Lasting is a promtool test of the samples held for an hour, each series
// as scraped, those named in aging growing by 60 a minute (an age in
// seconds, as rpengine_drift_oldest_seconds grows while the drift lasts),
// labelled job="rpengine", instance="scraped". It expects alert not
// firing at the start (the ages as scraped) and firing after the hour.
func Lasting(rules string, samples []Sample, aging []string, alert string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "rule_files: [%q]\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n", rules)
	for _, s := range samples {
		values := strconv.FormatFloat(s.Value, 'f', -1, 64) + "x60"
		for _, a := range aging {
			if s.Name == a {
				values = strconv.FormatFloat(s.Value, 'f', -1, 64) + "+60x60"
			}
		}
		fmt.Fprintf(&b, "      - series: '%s%s'\n        values: '%s'\n", s.Name, withTarget(s.Labels), values)
	}
	fmt.Fprintf(&b, "    promql_expr_test:\n")
	fmt.Fprintf(&b, "      - expr: count(ALERTS{alertname=%q})\n        eval_time: 0m\n        exp_samples: []\n", alert)
	fmt.Fprintf(&b, "      - expr: count(ALERTS{alertname=%q,alertstate=\"firing\"})\n        eval_time: 60m\n"+
		"        exp_samples:\n          - labels: '{}'\n            value: 1\n", alert)
	return b.String()
}

// withTarget adds the labels a scrape adds to the series' own.
func withTarget(labels string) string {
	const target = `job="rpengine",instance="scraped"`
	if labels == "" {
		return "{" + target + "}"
	}
	return "{" + target + "," + labels[1:]
}

// Test runs `promtool test rules` on test (a unit test file's text); a
// missing promtool skips t, or fails it under RPENGINE_REQUIRE_E2E=1.
func Test(t testing.TB, test string) {
	t.Helper()
	bin, err := exec.LookPath("promtool")
	if err != nil {
		testenv.Unavailable(t, "no promtool (Debian's prometheus package; make deps installs it)")
		return
	}
	path := filepath.Join(t.TempDir(), "scraped.test.yml")
	if err := os.WriteFile(path, []byte(test), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "test", "rules", path).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool test rules on the scraped series: %v\n%s\ntest file:\n%s", err, out, test)
	}
}

// Rules is the absolute path of the rules file.
func Rules(t testing.TB) string {
	t.Helper()
	p, err := testenv.RepoFile(RulesFile)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
