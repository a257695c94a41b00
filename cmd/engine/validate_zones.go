package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/rpengine/rpengine/internal/config"
	"github.com/rpengine/rpengine/internal/redact"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// novaAggregate is one entry of nova's GET /os-aggregates (uuid at 2.41+).
type novaAggregate struct {
	UUID string  `json:"uuid"`
	Name string  `json:"name"`
	Zone *string `json:"availability_zone"`
}

// novaAggregatesVersion is the compute microversion that shows uuids.
const novaAggregatesVersion = "2.41"

// computeService is the name of the granted service that is nova's API:
// "compute", or one granted "catalog:compute"; "" when none is.
func computeService(cfg *config.Config) string {
	if _, ok := cfg.Plugin.Grants["compute"]; ok {
		return "compute"
	}
	names := make([]string, 0, len(cfg.Plugin.Grants))
	for name, g := range cfg.Plugin.Grants {
		if g.URL == "catalog:compute" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	if len(names) == 0 {
		return ""
	}
	return names[0]
}

// checkZones is validate's step for provider.aggregate_rules: with nova's
// API granted, each rule's aggregate must be a nova aggregate (nova's
// scheduler asks Placement for the nova aggregate's uuid), and a rule
// that names a zone must find it in the aggregate's availability_zone.
func checkZones(ctx context.Context, cfg *config.Config, o wasmhost.Options, v validation) {
	if len(cfg.Provider.AggregateRules) == 0 {
		return
	}
	name := computeService(cfg)
	if name == "" || o.Services[name] == "" {
		v.note("provider.aggregate_rules: no compute service in [plugin.services] (compute = \"catalog:compute\"): " +
			"the rules' aggregates are not checked against nova's")
		return
	}
	aggs, err := novaAggregates(ctx, o, name)
	if err != nil {
		v.problem("provider.aggregate_rules: reading nova's aggregates at %s: %v", redact.URL(o.Services[name]), err)
		return
	}
	for i, r := range cfg.Provider.AggregateRules {
		for _, u := range r.Aggregates {
			checkZoneAggregate(v, fmt.Sprintf("provider.aggregate_rules[%d]", i), r, u, aggs)
		}
	}
}

func checkZoneAggregate(v validation, key string, r config.AggregateRule, uuid string, aggs []novaAggregate) {
	i := slices.IndexFunc(aggs, func(a novaAggregate) bool { return strings.EqualFold(a.UUID, uuid) })
	switch {
	case i < 0:
		v.problem("%s: aggregate %s is not a nova aggregate: nova's scheduler never asks for it "+
			"(create it with `openstack aggregate create --zone ZONE NAME` and use its uuid)", key, uuid)
	case aggs[i].Zone == nil || *aggs[i].Zone == "":
		msg := "%s: nova aggregate %s (%s) has no availability_zone: no zone maps to it " +
			"(`openstack aggregate set --zone ZONE %s`)"
		if r.Zone != "" {
			v.problem(msg, key, uuid, aggs[i].Name, aggs[i].Name)
		} else {
			v.note(msg, key, uuid, aggs[i].Name, aggs[i].Name)
		}
	case r.Zone != "" && r.Zone != *aggs[i].Zone:
		v.problem("%s: zone = %q, but nova aggregate %s (%s) is in zone %q", key, r.Zone, uuid, aggs[i].Name, *aggs[i].Zone)
	default:
		v.ok("%s: aggregate %s is nova's %s, zone %s", key, uuid, aggs[i].Name, *aggs[i].Zone)
	}
}

// novaAggregates reads GET /os-aggregates from the granted service, with
// the credential the plugin's calls to it carry.
func novaAggregates(ctx context.Context, o wasmhost.Options, name string) ([]novaAggregate, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", strings.TrimRight(o.Services[name], "/")+"/os-aggregates", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-OpenStack-Nova-API-Version", novaAggregatesVersion)
	req.Header.Set("Accept", "application/json")
	if cr := o.Credentials[name]; cr != nil {
		if err := cr.Apply(ctx, req); err != nil {
			return nil, fmt.Errorf("the engine's credentials: %w", err)
		}
	}
	client := o.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("answered %d: %.200s", resp.StatusCode, body)
	}
	var out struct {
		Aggregates []novaAggregate `json:"aggregates"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("not an aggregate list: %w", err)
	}
	for _, a := range out.Aggregates {
		if a.UUID == "" {
			return nil, fmt.Errorf("aggregate %q has no uuid (nova older than microversion %s?)", a.Name, novaAggregatesVersion)
		}
	}
	return out.Aggregates, nil
}
