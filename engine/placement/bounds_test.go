package placement_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rpengine/rpengine/engine/placement"
)

// hostile answers discovery properly and every other GET with body;
// writes are counted (none may follow a refused answer).
type hostile struct {
	body   func(w http.ResponseWriter)
	writes atomic.Int64
}

func (h *hostile) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/" {
		w.Write([]byte(`{"versions":[{"id":"v1.0","max_version":"1.39","min_version":"1.0"}]}`))
		return
	}
	if r.Method != "GET" {
		h.writes.Add(1)
	}
	h.body(w)
}

func hostileClient(t *testing.T, cfg placement.Config, body func(w http.ResponseWriter)) *placement.Client {
	t.Helper()
	h := &hostile{body: body}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	cfg.Endpoint, cfg.Token = srv.URL, "admin"
	pc, err := placement.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return pc
}

func fixed(s string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) { w.Write([]byte(s)) }
}

const goodUUID = "00000000-0000-4000-8000-000000000001"

func provider(uuid, gen string) string {
	return fmt.Sprintf(`{"uuid": %q, "name": "n", "generation": %s}`, uuid, gen)
}

// Each hostile listing is refused whole, with an error naming what was
// wrong, by both listing calls.
func TestListingRefusals(t *testing.T) {
	huge := `"` + strings.Repeat("9", 10<<20) + `"`
	for _, c := range []struct{ name, body, want string }{
		{"no resource_providers key", `{"providers": []}`, `answer without "resource_providers"`},
		{"path in uuid", `{"resource_providers": [` + provider("../resource_providers/"+goodUUID, "1") + `]}`, `provider uuid "../resource_providers/`},
		{"bad parent", `{"resource_providers": [{"uuid": "` + goodUUID + `", "generation": 1, "parent_provider_uuid": "x/y"}]}`, `parent_provider_uuid "x/y" is not a uuid`},
		{"string generation", `{"resource_providers": [` + provider(goodUUID, `"7"`) + `]}`, `generation "\"7\"" is not an integer`},
		{"10 MiB generation", `{"resource_providers": [` + provider(goodUUID, huge) + `]}`, `(10485762 bytes)`},
		{"negative generation", `{"resource_providers": [` + provider(goodUUID, "-1") + `]}`, `generation "-1"`},
		{"fraction", `{"resource_providers": [` + provider(goodUUID, "1.5") + `]}`, `generation "1.5"`},
		{"past int64", `{"resource_providers": [` + provider(goodUUID, "9223372036854775808") + `]}`, `generation "9223372036854775808"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			pc := hostileClient(t, placement.Config{}, fixed(c.body))
			_, err := pc.ListProviders(context.Background(), nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("ListProviders: %v; want %q", err, c.want)
			}
			if c.name == "bad parent" {
				return // the idle listing reads no parents
			}
			_, err = pc.ProviderGenerations(context.Background(), nil, 0)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("ProviderGenerations: %v; want %q", err, c.want)
			}
			if len(err.Error()) > 400 {
				t.Fatalf("the error is %d bytes: an answer's junk must not flood the log", len(err.Error()))
			}
		})
	}
}

func TestListingAtTheBoundsIsAccepted(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"resource_providers": [`)
	for i := range 3 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(provider(fmt.Sprintf("00000000-0000-4000-8000-%012d", i), "9223372036854775807"))
	}
	b.WriteString(`]}`)
	pc := hostileClient(t, placement.Config{MaxProviders: 3, MaxResponse: int64(b.Len())}, fixed(b.String()))
	ps, err := pc.ListProviders(context.Background(), nil)
	if err != nil || len(ps) != 3 || ps[2].Generation != "9223372036854775807" {
		t.Fatalf("%v %+v", err, ps)
	}
}

func TestProviderCountCap(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"resource_providers": [`)
	for i := range 4 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(provider(fmt.Sprintf("00000000-0000-4000-8000-%012d", i), "1"))
	}
	b.WriteString(`]}`)
	pc := hostileClient(t, placement.Config{MaxProviders: 3}, fixed(b.String()))
	if _, err := pc.ProviderGenerations(context.Background(), nil, 0); err == nil || !strings.Contains(err.Error(), "more than placement.max_providers (3)") {
		t.Fatalf("%v", err)
	}
}

// The size cap holds with and without Content-Length, and stops reading:
// a 64 MiB answer under a 1 MiB cap is refused after about 1 MiB.
func TestResponseSizeCap(t *testing.T) {
	big := func(chunked bool) func(w http.ResponseWriter) {
		return func(w http.ResponseWriter) {
			if !chunked {
				w.Header().Set("Content-Length", fmt.Sprint(64<<20))
			}
			w.Write([]byte(`{"resource_providers": [`))
			p := []byte(provider(goodUUID, "1") + ",")
			chunk := bytes.Repeat(p, (64<<10)/len(p))
			for sent := 0; sent < 64<<20-len(chunk); sent += len(chunk) {
				if _, err := w.Write(chunk); err != nil {
					return // the client hung up: what the cap is for
				}
			}
		}
	}
	for _, chunked := range []bool{false, true} {
		pc := hostileClient(t, placement.Config{MaxResponse: 1 << 20, MaxProviders: 1 << 30}, big(chunked))
		_, err := pc.ListProviders(context.Background(), nil)
		if err == nil || !strings.Contains(err.Error(), "/resource_providers: answer larger than placement.max_response (1048576 bytes)") {
			t.Fatalf("chunked %v: %v", chunked, err)
		}
	}
}

// Reads need their key and generation: an answer without them would be
// read as empty and "corrected" by a write.
func TestReadsNeedTheirKeys(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name, body, want string
		call             func(*placement.Client) error
	}{
		{"inventories", `{"resource_provider_generation": 1}`, `without "inventories"`, func(pc *placement.Client) error {
			_, _, err := pc.Inventories(ctx, goodUUID)
			return err
		}},
		{"traits", `{"resource_provider_generation": 1, "traits": null}`, `without "traits"`, func(pc *placement.Client) error {
			_, _, err := pc.Traits(ctx, goodUUID)
			return err
		}},
		{"aggregates", `{"aggregates": []}`, `without resource_provider_generation`, func(pc *placement.Client) error {
			_, _, err := pc.Aggregates(ctx, goodUUID)
			return err
		}},
		{"usages", `{"resource_provider_generation": 2}`, `without "usages"`, func(pc *placement.Client) error {
			_, _, err := pc.Usages(ctx, goodUUID)
			return err
		}},
		{"provider", `{"uuid": "00000000-0000-4000-8000-000000000002", "generation": 1}`, `answer names "00000000-0000-4000-8000-000000000002"`, func(pc *placement.Client) error {
			_, err := pc.GetProvider(ctx, goodUUID)
			return err
		}},
		{"write", `{"resource_provider_generation": "x", "traits": []}`, `generation "\"x\""`, func(pc *placement.Client) error {
			_, err := pc.SetTraits(ctx, goodUUID, "1", nil)
			return err
		}},
	} {
		pc := hostileClient(t, placement.Config{}, fixed(c.body))
		if err := c.call(pc); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", c.name, err, c.want)
		}
	}
}

// BenchmarkHugeListing: a 200 MiB listing of made-up providers (links
// included, as Placement writes them), with the default caps and with
// the caps lifted (the client before them). B/op is what decoding cost.
// Rerun: go test -run X -bench HugeListing -benchtime 1x ./engine/placement/
func BenchmarkHugeListing(b *testing.B) {
	const size = 200 << 20
	one := func(i int) string {
		u := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		return fmt.Sprintf(`{"uuid": %q, "name": %q, "generation": 1, "links": [{"rel": "self", "href": "/resource_providers/%s"}, `+
			`{"rel": "inventories", "href": "/resource_providers/%s/inventories"}, {"rel": "usages", "href": "/resource_providers/%s/usages"}, `+
			`{"rel": "aggregates", "href": "/resource_providers/%s/aggregates"}, {"rel": "traits", "href": "/resource_providers/%s/traits"}, `+
			`{"rel": "allocations", "href": "/resource_providers/%s/allocations"}], "parent_provider_uuid": null, "root_provider_uuid": %q}`, u, u, u, u, u, u, u, u, u)
	}
	// Built once, so B/op counts the client's allocations only.
	all := []byte(`{"resource_providers": [`)
	for i := 0; len(all) < size; i++ {
		if i > 0 {
			all = append(all, ',')
		}
		all = append(all, one(i)...)
	}
	all = append(all, `]}`...)
	body := func(w http.ResponseWriter) { w.Write(all) }
	for _, c := range []struct {
		name string
		cfg  placement.Config
	}{
		{"default caps", placement.Config{}},
		{"caps lifted", placement.Config{MaxResponse: 1 << 40, MaxProviders: 1 << 30}},
	} {
		b.Run(c.name, func(b *testing.B) {
			pc := hostileClient(&testing.T{}, c.cfg, body)
			b.ReportAllocs()
			for b.Loop() {
				ps, err := pc.ProviderGenerations(context.Background(), nil, 0)
				b.ReportMetric(float64(len(ps)), "providers")
				if err != nil {
					b.ReportMetric(1, "refused")
				}
			}
		})
	}
}
