package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/config"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// validate reads nova's os-aggregates (a fake nova here) and names a
// missing aggregate, an aggregate without a zone and a zone that differs,
// and says ok for one that matches.
func TestValidateZonesAgainstNovaAggregates(t *testing.T) {
	nova := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v2.1/os-aggregates" || r.Header.Get("X-OpenStack-Nova-API-Version") != "2.41" {
			http.Error(w, "unexpected "+r.URL.Path, 404)
			return
		}
		w.Write([]byte(`{"aggregates": [
			{"uuid": "a0a0a0a0-0000-4000-8000-00000000000a", "name": "rack-a", "availability_zone": "az-a"},
			{"uuid": "b0b0b0b0-0000-4000-8000-00000000000b", "name": "rack-b", "availability_zone": null},
			{"uuid": "c0c0c0c0-0000-4000-8000-00000000000c", "name": "rack-c", "availability_zone": "az-x"}]}`))
	}))
	defer nova.Close()
	str := func(s string) *string { return &s }
	cfg := &config.Config{}
	cfg.Plugin.Grants = map[string]config.Grant{"nova": {URL: "catalog:compute"}}
	cfg.Provider.AggregateRules = []config.AggregateRule{
		{Zone: "az-a", Shard: str("a"), Aggregates: []string{"a0a0a0a0-0000-4000-8000-00000000000a"}},
		{Zone: "az-b", Shard: str("b"), Aggregates: []string{"b0b0b0b0-0000-4000-8000-00000000000b"}},
		{Zone: "az-c", Shard: str("c"), Aggregates: []string{"c0c0c0c0-0000-4000-8000-00000000000c"}},
		{Shard: str("d"), Aggregates: []string{"d0d0d0d0-0000-4000-8000-00000000000d"}},
	}
	var out, errOut bytes.Buffer
	v := validation{out: &out, errOut: &errOut, t: &tally{}}
	checkZones(context.Background(), cfg, wasmhost.Options{Services: map[string]string{"nova": nova.URL + "/v2.1"}}, v)
	for _, want := range []string{
		"provider.aggregate_rules[1]: nova aggregate b0b0b0b0-0000-4000-8000-00000000000b (rack-b) has no availability_zone",
		`provider.aggregate_rules[2]: zone = "az-c", but nova aggregate c0c0c0c0-0000-4000-8000-00000000000c (rack-c) is in zone "az-x"`,
		"provider.aggregate_rules[3]: aggregate d0d0d0d0-0000-4000-8000-00000000000d is not a nova aggregate",
	} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("errors lack %q:\n%s", want, errOut.String())
		}
	}
	if v.t.other != 3 || !strings.Contains(out.String(), "ok    provider.aggregate_rules[0]: aggregate a0a0a0a0-0000-4000-8000-00000000000a is nova's rack-a, zone az-a") {
		t.Errorf("%d problems; stdout:\n%s", v.t.other, out.String())
	}

	// Without a compute grant: a note, no problem.
	cfg.Plugin.Grants = nil
	out.Reset()
	checkZones(context.Background(), cfg, wasmhost.Options{}, validation{out: &out, errOut: &errOut, t: &tally{}})
	if !strings.Contains(out.String(), "note  provider.aggregate_rules: no compute service") {
		t.Errorf("no grant: %s", out.String())
	}
}
