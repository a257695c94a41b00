package ironictest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/testenv"
)

// Ironic refuses a node a conductor group no conductor serves, so a test
// of conductor groups needs a conductor per group. StartRealGroups runs
// the one Ironic process (API and the default group's conductor) and one
// ironic-conductor per group, on the same sqlite database, speaking
// JSON-RPC instead of the all-in-one's in-process calls: the API reaches
// a conductor at its host name and the one [json_rpc] port, so each
// extra conductor is a loopback address of its own (127.0.0.2, ...),
// serving that port there.

const conductorMain = "import sys; from ironic.cmd.conductor import main; sys.exit(main())"

// StartRealGroups is StartReal with one more conductor for each of
// groups (besides the default group, ""). It returns once the API lists
// every conductor alive, so a node may be put in any of the groups.
func StartRealGroups(t testing.TB, groups ...string) string {
	t.Helper()
	var rpcPort int
	p, dir := startAPI(t, func() []func(string) string {
		port, err := testenv.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		rpcPort = port
		return []func(string) string{jsonRPC("localhost", "127.0.0.1", port, "")}
	})
	db, _ := databases.Load(p.URL)
	for i, g := range groups {
		c, err := launchConductor(filepath.Join(dir, "conductor-"+strconv.Itoa(i)), db.(string),
			fmt.Sprintf("127.0.0.%d", i+2), rpcPort, g, p.URL)
		if err != nil {
			t.Fatalf("start the conductor of group %q: %v", g, err)
		}
		t.Cleanup(c.Stop)
	}
	return p.URL
}

// jsonRPC rewrites a config to reach the conductors by JSON-RPC: this
// process's conductor is host, its JSON-RPC server on ip:port; group, if
// set, is the conductor group it serves.
func jsonRPC(host, ip string, port int, group string) func(string) string {
	return func(conf string) string {
		conf = strings.Replace(conf, "rpc_transport = none", "rpc_transport = json-rpc", 1)
		conf = strings.Replace(conf, "host = localhost", "host = "+host, 1)
		if group != "" {
			conf = strings.Replace(conf, "[conductor]\n", "[conductor]\nconductor_group = "+group+"\n", 1)
		}
		return conf + fmt.Sprintf("\n[json_rpc]\nhost_ip = %s\nport = %d\n", ip, port)
	}
}

// launchConductor starts an ironic-conductor as host (a loopback
// address) for group on database db, ready when the API at apiURL lists
// it alive.
func launchConductor(dir, db, host string, rpcPort int, group, apiURL string) (*testenv.Service, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	conf, err := writeConf(dir, 0, db, jsonRPC(host, host, rpcPort, group))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(python, "-c", conductorMain, "--config-file", conf)
	cmd.Env = testenv.PythonEnv()
	ready := func(hc *http.Client, url string) bool { return conductorAlive(hc, url, host, group) }
	return testenv.Launch(cmd, filepath.Join(dir, "conductor.log"), apiURL, ready, readyTimeout, 0)
}

// conductorAlive says whether the API at url lists conductor host alive,
// serving group.
func conductorAlive(hc *http.Client, url, host, group string) bool {
	req, _ := http.NewRequest("GET", url+"/v1/conductors?detail=true", nil)
	req.Header.Set("X-OpenStack-Ironic-API-Version", Microversion)
	resp, err := hc.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var body struct {
		Conductors []conductor `json:"conductors"`
	}
	if resp.StatusCode != 200 || json.NewDecoder(resp.Body).Decode(&body) != nil {
		return false
	}
	return slices.ContainsFunc(body.Conductors, func(c conductor) bool {
		return c.Hostname == host && c.Alive && strings.EqualFold(c.Group, group)
	})
}

// conductor is one entry of GET /v1/conductors?detail=true.
type conductor struct {
	Hostname string `json:"hostname"`
	Group    string `json:"conductor_group"`
	Alive    bool   `json:"alive"`
}
