package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// No way of printing an Endpoint, alone or in a struct, shows its
// credentials; Raw keeps them for the client.
func TestEndpointPrintsRedacted(t *testing.T) {
	raw := "http://u:EndpointPw1@h:8778/p?token=EndpointTok1"
	e := NewEndpoint(raw)
	in := struct{ Endpoint Endpoint }{e}
	js, _ := json.Marshal(in)
	var logged bytes.Buffer
	slog.New(slog.NewTextHandler(&logged, nil)).Info("x", "endpoint", e, "in", in)
	for _, s := range []string{fmt.Sprint(e), fmt.Sprintf("%s %q %v %+v %#v", e, e, in, in, in), string(js), logged.String()} {
		if strings.Contains(s, "EndpointPw1") || strings.Contains(s, "EndpointTok1") || !strings.Contains(s, "xxxxx") {
			t.Errorf("shown: %s", s)
		}
	}
	if e.Raw() != raw || e.IsZero() || !NewEndpoint("").IsZero() {
		t.Errorf("raw %q", e.Raw())
	}
}
