package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/config"
	"github.com/rpengine/rpengine/internal/coord"
)

func TestCompactUnits(t *testing.T) {
	units := []string{"partition/16/0000", "partition/16/0001", "partition/16/0002", "partition/16/0005", "partition/16/0007", "partition/16/0008"}
	if got := compact(units); got != "partitions 0-2,5,7-8" {
		t.Fatalf("compact %q", got)
	}
	if got := compact([]string{"shard/a", "shard/b"}); got != "shard/a shard/b" {
		t.Fatalf("compact %q", got)
	}
}

func TestPrintStatus(t *testing.T) {
	st := coord.Status{Prefix: "/rpengine/", Division: "partitions=4",
		Members: []coord.MemberView{{MemberInfo: coord.MemberInfo{ID: "e1", Host: "h1", PID: 7},
			Holds: []string{"partition/4/0000", "partition/4/0001"}}},
		Pending: []coord.PendingMove{{Unit: "partition/4/0002", To: "e1"}},
		Moves:   []coord.Move{{At: time.Unix(0, 0), Member: "e1", Unit: "partition/4/0000", Action: "acquired", From: "e2"}}}
	var b bytes.Buffer
	printStatus(&b, st, config.BackendEtcd)
	for _, want := range []string{"etcd prefix /rpengine/, division partitions=4: 1 members", "partitions 0-1", "partition/4/0002: (nobody) -> e1", "e1 acquired partition/4/0000 from e2"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("status output lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	printStatus(&b, st, config.BackendKubernetes)
	if !strings.HasPrefix(b.String(), "Kubernetes (Leases and ConfigMaps) prefix /rpengine/,") {
		t.Errorf("under Kubernetes the header says %q", strings.SplitN(b.String(), "\n", 2)[0])
	}
}

func TestOnceRefusesToWriteUnderCoord(t *testing.T) {
	cfg := &config.Config{Coord: config.Coord{Etcd: []string{"http://127.0.0.1:2379"}}}
	if uncoordinated(cfg, false) == nil || uncoordinated(cfg, true) != nil || uncoordinated(&config.Config{}, false) != nil {
		t.Fatal("once must refuse to write under [coord]; plan and uncoordinated once may run")
	}
}
