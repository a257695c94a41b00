package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// docs/CLI.md holds `rpengine help` word for word: a verb added, renamed or
// re-described fails here until the page says it too.
func TestCLIDocMatchesHelp(t *testing.T) {
	old := prog
	prog = "rpengine"
	defer func() { prog = old }()
	var b bytes.Buffer
	usage(&b)
	doc, err := os.ReadFile("../../docs/CLI.md")
	if err != nil {
		t.Fatal(err)
	}
	block := "```\n$ rpengine help\n" + b.String() + "```\n"
	if !strings.Contains(string(doc), block) {
		t.Errorf("docs/CLI.md lacks `rpengine help` as the binary prints it; put this block under \"The verbs\":\n%s", block)
	}
}
