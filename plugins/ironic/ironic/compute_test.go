package ironic

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"testing"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/plugins/ironic/internal/fakeironic"
)

// novaServers is a minimal Compute API: GET /servers/detail with host,
// limit and marker (400 for an unknown marker, like Nova).
type novaServers struct {
	servers []map[string]any
	hosts   []string
	onPage  func(n int)
	pages   int
}

func (n *novaServers) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	n.pages++
	if n.onPage != nil {
		n.onPage(n.pages)
	}
	n.hosts = append(n.hosts, q.Get("host")+"/"+q.Get("all_tenants"))
	limit, _ := strconv.Atoi(q.Get("limit"))
	start := 0
	if m := q.Get("marker"); m != "" {
		start = -1
		for i, s := range n.servers {
			if s["id"] == m {
				start = i + 1
			}
		}
		if start < 0 {
			w.WriteHeader(400)
			w.Write([]byte(`{"badRequest": {"code": 400, "message": "marker [` + m + `] not found"}}`))
			return
		}
	}
	end := min(start+limit, len(n.servers))
	body := map[string]any{"servers": n.servers[start:end]}
	if end-start == limit {
		body["servers_links"] = []map[string]string{{"rel": "next", "href": "http://nova/servers/detail?marker=x"}}
	}
	json.NewEncoder(w).Encode(body)
}

func server(id, node string) map[string]any {
	s := map[string]any{"id": id, "status": "ACTIVE", "OS-EXT-SRV-ATTR:hypervisor_hostname": node}
	if node == "" {
		s["OS-EXT-SRV-ATTR:hypervisor_hostname"] = nil
	}
	return s
}

func TestListInstancesFromTheComputeAPI(t *testing.T) {
	nova := &novaServers{servers: []map[string]any{
		server("a0000000-0000-4000-8000-000000000001", "b0000000-0000-4000-8000-000000000001"),
		server("a0000000-0000-4000-8000-000000000002", ""), // still building: on no node yet
		server("a0000000-0000-4000-8000-000000000003", "b0000000-0000-4000-8000-000000000003"),
	}}
	c := start(t, fakeironic.New(nil, 82), Config{PageSize: 2, MaxRestarts: 1, ComputeHost: "ironic-1"}, nova)
	got, err := c.ListInstances()
	if err != nil {
		t.Fatal(err)
	}
	want := []hostabi.Instance{
		{UUID: "a0000000-0000-4000-8000-000000000001", NodeUUID: "b0000000-0000-4000-8000-000000000001"},
		{UUID: "a0000000-0000-4000-8000-000000000003", NodeUUID: "b0000000-0000-4000-8000-000000000003"},
	}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(nova.hosts, []string{"ironic-1/1", "ironic-1/1"}) {
		t.Fatalf("got %v (asked %v)", got, nova.hosts)
	}

	// A marker deleted between pages restarts the listing, within bounds.
	nova.pages, nova.hosts = 0, nil
	nova.onPage = func(n int) {
		if n == 2 {
			nova.servers = nova.servers[2:]
		}
	}
	got, err = c.ListInstances()
	if err != nil || len(got) != 1 || nova.pages != 3 {
		t.Fatalf("after restart: %v %v (%d pages)", got, err, nova.pages)
	}
}

func TestListInstancesWithoutComputeHostIsEmpty(t *testing.T) {
	c := New(Config{}, func(r guestRequest) (guestResponse, error) {
		t.Fatalf("asked %s %s", r.Service, r.Path)
		return guestResponse{}, nil
	})
	got, err := c.ListInstances()
	if err != nil || got == nil || len(got) != 0 {
		t.Fatalf("got %v, %v; want an empty list", got, err)
	}
}
