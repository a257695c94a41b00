package ironic

import (
	"os"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
)

// FuzzPageBody feeds arbitrary bodies to everything the plugin decodes
// from Ironic and Nova: it must never panic, and a page it accepts must
// give a node with a uuid for every entry.
func FuzzPageBody(f *testing.F) {
	if real, err := os.ReadFile("../internal/fakeironic/testdata/real_page_1.82.json"); err == nil {
		f.Add(real)
	}
	for _, s := range []string{
		`{"nodes": []}`, `{"nodes": [{"uuid": "a", "traits": null}], "next": "x"}`, `{"nodes": [{}]}`,
		`{"error_message": "{\"faultstring\": \"Node x could not be found.\"}"}`,
		`{"error_message": "not json"}`, `{"itemNotFound": {"message": "m"}}`, `[{"rel": "next"}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		_ = faultString(body)
		_ = hasNext(string(body))
		p, err := ProjectPage(body)
		if err != nil {
			return
		}
		_ = p.Next()
		nodes := make([]hostabi.Node, p.Len())
		if err := p.Fill(nodes); err != nil {
			return
		}
		for i, n := range nodes {
			if n.UUID == "" || p.UUID(i) != n.UUID {
				t.Fatalf("node %d: uuid %q / %q accepted", i, n.UUID, p.UUID(i))
			}
		}
		if _, _, err := MergePages([]Page{p}); err != nil {
			t.Fatalf("filled page does not merge: %v", err)
		}
	})
}
