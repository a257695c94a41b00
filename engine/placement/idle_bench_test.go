package placement

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
)

// BenchmarkIdleListing is an idle cycle's one request, GET
// /resource_providers?required=OWNER, through ProviderGenerations
// ("listing") beside the minimal job that answers the same question
// ("minimal"): the same answer fetched over HTTP, each provider's uuid and
// generation found by searching the bytes (nothing validated, nothing
// kept), and compared with the previous cycle's. The listing's goal is
// ≤ 1.2× the minimal job. Compare two builds with interleaved runs:
//
//	go test -c -o new.test ./engine/placement   # and old.test from the code before
//	for r in 1 2 3 4 5 6; do for b in old new; do ./$b.test -test.run '^$' \
//	    -test.bench IdleListing -test.benchtime 10x -test.benchmem; done; done | tee runs.txt
func BenchmarkIdleListing(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		body := providersJSON(n)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/" {
				w.Write([]byte(`{"versions":[{"id":"v1.0","max_version":"1.39"}]}`))
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Write(body)
		}))
		ctx := context.Background()
		c, err := New(ctx, Config{Endpoint: srv.URL, Token: "admin"})
		if err != nil {
			b.Fatal(err)
		}
		query := url.Values{"required": {"CUSTOM_RPENGINE_OWNER_BENCH"}}
		prev, err := c.ProviderGenerations(ctx, query, n)
		if err != nil || len(prev) != n {
			b.Fatalf("listing: %d providers, %v", len(prev), err)
		}
		b.Run(fmt.Sprintf("listing_%dk", n/1000), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				m, err := c.ProviderGenerations(ctx, query, n)
				if err != nil || len(m) != n || changed(prev, m) != 0 {
					b.Fatalf("listing: %d providers, %v", len(m), err)
				}
			}
		})
		b.Run(fmt.Sprintf("minimal_%dk", n/1000), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			hc, buf := &http.Client{}, new(bytes.Buffer)
			for b.Loop() {
				if same, err := minimalIdle(hc, buf, srv.URL+"/resource_providers?"+query.Encode(), prev); err != nil || same != n {
					b.Fatalf("minimal: %d providers unchanged, %v", same, err)
				}
			}
		})
		srv.Close()
	}
}

// changed counts the providers of cur whose generation differs from
// prev's, as an idle cycle compares them.
func changed(prev, cur map[string]Generation) int {
	n := 0
	for u, g := range cur {
		if prev[u] != g {
			n++
		}
	}
	return n + len(prev) - len(cur)
}

// minimalIdle is the least an idle cycle must do: fetch the listing and
// find, by searching its bytes for the two members, each provider's uuid
// and generation, looked up in the previous cycle's. It trusts the
// answer's shape (uuid before generation, no escapes, no spaces inside
// the values), which the listing call may not. buf is reused: the job
// keeps no memory from one cycle to the next.
func minimalIdle(hc *http.Client, buf *bytes.Buffer, u string, prev map[string]Generation) (int, error) {
	req, _ := http.NewRequest("GET", u, nil)
	req.Header.Set("X-Auth-Token", "admin")
	req.Header.Set("OpenStack-API-Version", "placement 1.39")
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	buf.Reset()
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return 0, err
	}
	return minimalScan(buf.Bytes(), prev)
}

// minimalScan is minimalIdle's work on the answer's bytes.
func minimalScan(b []byte, prev map[string]Generation) (int, error) {
	same := 0
	uuidKey, genKey := []byte(`"uuid": "`), []byte(`"generation": `)
	for {
		i := bytes.Index(b, uuidKey)
		if i < 0 {
			return same, nil
		}
		b = b[i+len(uuidKey):]
		uuid := b[:bytes.IndexByte(b, '"')]
		j := bytes.Index(b, genKey)
		if j < 0 {
			return same, io.ErrUnexpectedEOF
		}
		b = b[j+len(genKey):]
		gen := b[:bytes.IndexAny(b, ",}")]
		if g, ok := prev[string(uuid)]; ok && string(g) == string(gen) {
			same++
		}
	}
}
