package placementtest

import (
	"net/http"
	"testing"
)

func TestMain(m *testing.M) { Main(m) }

// TestContractReal proves the contract suite against a real Placement.
func TestContractReal(t *testing.T) {
	t.Parallel()
	RunContract(t, Shared(t))
}

// TestStartReal checks that a private instance comes up ready and answers
// with the admin token.
func TestStartReal(t *testing.T) {
	t.Parallel()
	url := StartReal(t)
	if url == Shared(t) {
		t.Skip("RPENGINE_PLACEMENT_URL is set: nothing was started")
	}
	req, _ := http.NewRequest("GET", url+"/resource_providers", nil)
	req.Header.Set("X-Auth-Token", "admin")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /resource_providers: %d", resp.StatusCode)
	}
}
