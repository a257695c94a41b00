package ironic

import (
	"strings"
	"testing"
)

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig([]byte(`{}`))
	if err != nil || c.PageSize != 1000 || c.MaxRestarts != 3 || c.ComputeHost != "" {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	c, err = ParseConfig([]byte(`{"page_size": 50, "max_restarts": 0, "compute_host": "h1"}`))
	if err != nil || c.PageSize != 50 || c.MaxRestarts != 0 || c.ComputeHost != "h1" {
		t.Fatalf("%+v %v", c, err)
	}
	for raw, want := range map[string]string{
		`{"page_size": 5000}`:    "page_size = 5000",
		`{"page_size": 0}`:       "page_size = 0",
		`{"max_restarts": -1}`:   "max_restarts = -1",
		`{"endpoint": "http:x"}`: `unknown field "endpoint"`,
	} {
		if _, err := ParseConfig([]byte(raw)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want %q", raw, err, want)
		}
	}
}
