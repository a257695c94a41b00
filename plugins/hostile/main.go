package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/guest"
)

// config is [plugin.config].
type config struct {
	// Attack is what to do; In is the operation to do it in
	// ("list_nodes" if empty; also "configure", "list_instances",
	// "confirm_deleted").
	Attack string `json:"attack"`
	In     string `json:"in"`

	// fetch and service: the request to make.
	Service string            `json:"service"`
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Header  map[string]string `json:"header"`
	Body    string            `json:"body"`

	// huge: the answer's size; near_limit: live data kept and garbage
	// churned through; log: lines to log.
	MiB      int `json:"mib"`
	LiveMiB  int `json:"live_mib"`
	ChurnMiB int `json:"churn_mib"`
	Lines    int `json:"lines"`
	Rounds   int `json:"rounds"`

	// open, write, dial: the target.
	Target string `json:"target"`
}

type hostile struct{ cfg config }

// Describe gives a name and a version but, as plugins older than
// describe's "services" do, declares no services: the host (and the
// conformance kit) leave its calls unchecked (ABI §2).
func (h *hostile) Describe() (name, ver string) { return "hostile", "0" }

// node is the one well-formed node every harmless answer carries.
var node = hostabi.Node{UUID: "5d7e0f5c-0000-4000-8000-000000000001", Name: "decoy", ResourceClass: "baremetal"}

func (h *hostile) Configure(raw []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h.cfg); err != nil {
		return "", fmt.Errorf("hostile plugin config: %w", err)
	}
	if _, err := h.attack("configure"); err != nil {
		return "", err
	}
	return "hostile", nil
}

func (h *hostile) ListNodes(hostabi.ListNodesRequest) ([]hostabi.Node, error) {
	return h.attack("list_nodes")
}

func (h *hostile) ListInstances() ([]hostabi.Instance, error) {
	_, err := h.attack("list_instances")
	return nil, err
}

func (h *hostile) ConfirmDeleted(uuids []string) (deleted, present []string, err error) {
	if _, err := h.attack("confirm_deleted"); err != nil {
		return nil, nil, err
	}
	return nil, uuids, nil
}

// trapOffset is far past any memory limit; a variable, so the compiler
// cannot fold it into an address.
var trapOffset = 0x7ff00000

// hoard keeps allocations reachable.
var hoard [][]byte

// attack does the configured attack if op is where it belongs, and
// returns the nodes to answer: loot if the attack got anything.
func (h *hostile) attack(op string) ([]hostabi.Node, error) {
	c := h.cfg
	if in := cmp(c.In, "list_nodes"); in != op {
		return []hostabi.Node{node}, nil
	}
	switch c.Attack {
	case "", "none":
		return []hostabi.Node{node}, nil
	case "trap": // a wasm trap with no Go panic: a load far outside memory
		far := unsafe.Add(unsafe.Pointer(&node), trapOffset)
		return []hostabi.Node{{UUID: fmt.Sprint(*(*int64)(far))}}, nil
	case "panic":
		panic("hostile panic in " + op)
	case "exit":
		os.Exit(7)
	case "spin":
		for x := 0; ; x++ {
			_ = x
		}
	case "hog":
		for {
			hoard = append(hoard, make([]byte, 1<<20))
		}
	case "huge": // a well-formed answer of MiB mebibytes
		name := strings.Repeat("x", 1<<20)
		nodes := make([]hostabi.Node, c.MiB)
		for i := range nodes {
			nodes[i] = hostabi.Node{UUID: fmt.Sprintf("5d7e0f5c-0000-4000-8000-%012d", i), Name: name}
		}
		return nodes, nil
	case "near_limit":
		return nearLimit(c.LiveMiB, c.ChurnMiB)
	case "log":
		for i := range c.Lines {
			guest.Log(hostabi.LevelInfo, fmt.Sprintf("hostile line %d", i))
		}
		return []hostabi.Node{node}, nil
	case "print": // raw output, e.g. a line forged to look like the engine's
		for range max(c.Lines, 1) {
			fmt.Fprintln(os.Stdout, c.Body)
			fmt.Fprintln(os.Stderr, c.Body)
		}
		return []hostabi.Node{node}, nil
	case "work": // ordinary Go work, for the benchmarks of the time limit
		return work(c.Rounds)
	case "clock":
		return loot("clock", time.Now().UTC().Format(time.RFC3339Nano)), nil
	}
	return reach(c)
}

// reach is the attacks on what the sandbox must keep out of reach: files,
// the network, the environment, services not granted.
func reach(c config) ([]hostabi.Node, error) {
	switch c.Attack {
	case "open":
		b, err := os.ReadFile(c.Target)
		if err != nil {
			return nil, err
		}
		return loot("file", string(b)), nil
	case "write":
		if err := os.WriteFile(c.Target, []byte("hostile was here"), 0o644); err != nil {
			return nil, err
		}
		return loot("wrote", c.Target), nil
	case "list_dir":
		es, err := os.ReadDir(c.Target)
		if err != nil {
			return nil, err
		}
		names := make([]string, len(es))
		for i, e := range es {
			names[i] = e.Name()
		}
		return loot("dir", strings.Join(names, ",")), nil
	case "dial":
		conn, err := net.Dial("tcp", c.Target)
		if err != nil {
			return nil, err
		}
		conn.Close()
		return loot("dialled", c.Target), nil
	case "env":
		var leaked []string
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "GOMEMLIMIT=") {
				leaked = append(leaked, kv)
			}
		}
		if len(leaked) > 0 {
			return loot("env", strings.Join(leaked, " ")), nil
		}
		return nil, fmt.Errorf("the environment holds nothing to steal: %q", os.Environ())
	case "service", "fetch":
		resp, err := guest.HTTP(guest.HTTPRequest{Service: c.Service, Method: c.Method, Path: c.Path,
			Header: c.Header, Body: []byte(c.Body)})
		if err != nil {
			return nil, err
		}
		return []hostabi.Node{echo(resp)}, nil
	}
	return nil, fmt.Errorf("unknown attack %q", c.Attack)
}

// echo puts a response in a node: the status in Name, the body in Fault,
// the headers in Traits (sorted "Key=Value").
func echo(resp guest.HTTPResponse) hostabi.Node {
	n := node
	n.Name, n.Fault = fmt.Sprint(resp.Status), string(resp.Body)
	for k, v := range resp.Header {
		n.Traits = append(n.Traits, k+"="+v)
	}
	slices.Sort(n.Traits)
	return n
}

func loot(kind, what string) []hostabi.Node {
	n := node
	n.Name, n.Fault = "LOOT:"+kind, what
	return []hostabi.Node{n}
}

// nearLimit keeps live MiB reachable while allocating churn MiB of
// short-lived 256 KiB chunks, the pattern that kills a Go guest whose GC
// is not told its memory limit.
func nearLimit(live, churn int) ([]hostabi.Node, error) {
	kept := make([][]byte, live)
	for i := range kept {
		kept[i] = make([]byte, 1<<20)
		kept[i][0] = byte(i)
	}
	var sink []byte
	for range churn * 4 {
		sink = make([]byte, 256<<10)
		sink[0] = 1
	}
	sum := 0
	for _, b := range kept {
		sum += int(b[0])
	}
	n := node
	n.Name = fmt.Sprintf("kept %d MiB, checksum %d, churned %d MiB", live, sum, churn)
	_ = sink
	return []hostabi.Node{n}, nil
}

// work encodes, decodes and indexes 1,000 nodes rounds times: the JSON
// and map code a real plugin runs, with no I/O.
func work(rounds int) ([]hostabi.Node, error) {
	nodes := make([]hostabi.Node, 1000)
	for i := range nodes {
		nodes[i] = hostabi.Node{UUID: fmt.Sprintf("5d7e0f5c-0000-4000-8000-%012d", i), Name: fmt.Sprintf("node-%d", i),
			ResourceClass: "baremetal", Traits: []string{"CUSTOM_A", "CUSTOM_B"}, ProvisionState: "available"}
	}
	sum := 0
	for range rounds {
		b, err := json.Marshal(nodes)
		if err != nil {
			return nil, err
		}
		var back []hostabi.Node
		if err := json.Unmarshal(b, &back); err != nil {
			return nil, err
		}
		index := make(map[string]int, len(back))
		for i, n := range back {
			index[n.UUID] = i
		}
		sum += index[nodes[len(nodes)/2].UUID] + len(b)
	}
	n := node
	n.Name = fmt.Sprint(sum)
	return []hostabi.Node{n}, nil
}

func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func init() { guest.Run(&hostile{}) }

// main is required by the go command; c-shared reactors never call it.
func main() {}
