package placementfake_test

import (
	"io"
	"net/http"
	"strconv"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

func list(t testing.TB, s *placementfake.Server) []byte {
	req, _ := http.NewRequest("GET", s.URL()+"/resource_providers", nil)
	req.Header.Set("X-Auth-Token", "admin")
	req.Header.Set("OpenStack-API-Version", "placement 1.39")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("list: %d %v", resp.StatusCode, err)
	}
	return body
}

// BenchmarkListProviders shows that listing is one linear pass: 10x the
// providers cost about 10x the time per listing (a benchmark, not a timed
// test, so a loaded machine cannot fail it).
func BenchmarkListProviders(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			s := placementfake.New()
			defer s.Close()
			for i := range n {
				_ = s.CreateProvider(uuidN(i), "node-"+uuidN(i))
			}
			for b.Loop() {
				list(b, s)
			}
		})
	}
}
