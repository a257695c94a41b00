package placementfake_test

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/placementfake"
)

// Listing must be one linear pass: 10x the providers may cost about 10x
// the time, not 100x. Comparing two sizes keeps the test meaningful on a
// slow or loaded machine and under -race.
func TestListScalesLinearly(t *testing.T) {
	if testing.Short() {
		t.Skip("large fleet")
	}
	small, large := listTime(t, 10_000), listTime(t, 100_000)
	t.Logf("GET /resource_providers: 10,000 providers %v, 100,000 providers %v", small, large)
	if large > 40*small {
		t.Errorf("10x the providers took %.0fx the time: not linear", float64(large)/float64(small))
	}
}

// listTime fills a fake with n providers and times one full listing
// (server side plus reading the bytes, no client decoding).
func listTime(t *testing.T, n int) time.Duration {
	s := placementfake.New()
	defer s.Close()
	for i := range n {
		if err := s.CreateProvider(uuidN(i), "node-"+uuidN(i)); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	body := list(t, s)
	took := time.Since(start)
	if got := bytes.Count(body, []byte(`"root_provider_uuid"`)); got != n {
		t.Fatalf("listed %d providers, want %d", got, n)
	}
	return took
}

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
