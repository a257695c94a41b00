package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/ironictest"
)

// The Ironic plugin behind Keystone: the catalog names the baremetal
// endpoint, a token-checking proxy stands before the real Ironic, and the
// host adds the token to every plugin call (the plugin cannot: the gate
// strips credential headers). One cycle writes every node.
func TestKeystoneGuardsIronicForThePluginE2E(t *testing.T) {
	ironicURL := ironictest.StartReal(t)
	ic := ironictest.NewClient(t, ironicURL)
	var uuids []string
	for i := range 3 {
		u := ic.Create(t, ironictest.Spec{Name: fmt.Sprintf("ks-%d", i), ResourceClass: "gold"})
		ic.Available(t, u)
		uuids = append(uuids, u)
	}

	ks, fake := keystoneCloud(t, ironicURL)
	cfg := ironicConfig(t, "ks-ironic", ks)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"once", "--config", cfg, "--json"}, &out, &errb)
	var rep struct {
		Created int      `json:"created"`
		Errors  []string `json:"errors"`
	}
	json.Unmarshal(out.Bytes(), &rep)
	if code != 0 || rep.Created != len(uuids) {
		t.Fatalf("once: exit %d, report %+v\n%s", code, rep, errb.String())
	}
	for _, u := range uuids {
		if _, ok := fake.Provider(u); !ok {
			t.Errorf("no provider for node %s", u)
		}
	}
	if ks.Rejected() != 0 {
		t.Fatalf("%d requests reached a guarded service without a live token", ks.Rejected())
	}
}
