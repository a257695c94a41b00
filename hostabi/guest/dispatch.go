package guest

import (
	"encoding/json"
	"fmt"
	"path"
	"runtime/debug"
	"strings"

	"github.com/rpengine/rpengine/hostabi"
)

// Handle runs one ABI operation on p exactly as the wasm exports do:
// decode the request, call the method, encode the answer, errors in-band.
// The host-side test harness (internal/testing/guesttest) uses it to run a
// plugin's tests natively; plugins never call it.
func Handle(p Plugin, export string, in []byte) []byte {
	if p == nil {
		return mustJSON(hostabi.Error{Error: "plugin did not call guest.Run"})
	}
	r := handle(p, export, in)
	if b, ok := r.(records); ok {
		return b
	}
	if nodes, ok := r.(hostabi.ListNodesResponse); ok {
		if b, ok := appendListNodes(make([]byte, 0, 256*len(nodes.Nodes)+64), nodes); ok {
			return b
		}
	}
	return mustJSON(r)
}

func handle(p Plugin, export string, in []byte) any {
	switch export {
	case hostabi.ExportDescribe:
		return describe(p)
	case hostabi.ExportConfigure:
		var r hostabi.ConfigureResponse
		name, err := p.Configure(in)
		r.Name = name
		setErr(&r.Error, err)
		return r
	case hostabi.ExportListNodes:
		return handleListNodes(p, in)
	case hostabi.ExportListInstances:
		var req hostabi.ListInstancesRequest
		_ = json.Unmarshal(in, &req) // older hosts send {}; anything else: JSON
		var r hostabi.ListInstancesResponse
		inst, err := p.ListInstances()
		if err == nil && hostabi.Accepts(req.Accept, hostabi.EncodingRecords) {
			return records(hostabi.AppendInstanceRecords(make([]byte, 0, 8+76*len(inst)), inst))
		}
		r.Instances = inst
		setErr(&r.Error, err)
		return r
	case hostabi.ExportConfirmDeleted:
		var req hostabi.ConfirmDeletedRequest
		var r hostabi.ConfirmDeletedResponse
		dc, ok := p.(DeletionChecker)
		if !ok {
			setErr(&r.Error, notImplemented(export))
			return r
		}
		if err := json.Unmarshal(in, &req); err != nil {
			setErr(&r.Error, fmt.Errorf("decode confirm_deleted request: %w", err))
			return r
		}
		deleted, present, err := dc.ConfirmDeleted(req.UUIDs)
		if err == nil {
			r.Deleted, r.Present = nonNil(deleted), nonNil(present)
		}
		setErr(&r.Error, err)
		return r
	}
	if r, ok := handleEvents(p, export, in); ok {
		return r
	}
	return hostabi.Error{Error: "unknown operation " + export}
}

// handleListNodes answers list_nodes, in the encoding the host accepts.
func handleListNodes(p Plugin, in []byte) any {
	var req hostabi.ListNodesRequest
	var r hostabi.ListNodesResponse
	if err := json.Unmarshal(in, &req); err != nil {
		setErr(&r.Error, fmt.Errorf("decode list_nodes request: %w", err))
		return r
	}
	binary := hostabi.Accepts(req.Accept, hostabi.EncodingRecords)
	byRef := hostabi.Accepts(req.Accept, hostabi.EncodingRefs)
	req.Accept = nil // the plugin's business is the scope, not the encoding
	nodes, refs, err := listNodes(p, req, byRef)
	if err == nil && refs != nil {
		return records(hostabi.AppendNodeRefs(make([]byte, 0, 64+12*len(refs.Runs)), *refs))
	}
	if err == nil && binary {
		if b, ok := hostabi.AppendNodeRecords(make([]byte, 0, hostabi.NodeRecordsSize(nodes)), nodes); ok {
			return records(b)
		}
	}
	if err == nil {
		r.Nodes, r.Complete = nodes, true
	}
	setErr(&r.Error, err)
	return r
}

// records is an answer already encoded in hostabi.EncodingRecords, which
// the host offered: about four times less work for a Go guest than the
// JSON of the same listing, and for the host than decoding it
// (hostabi/RATIONALE.md, "Binary records").
type records []byte

// describe says who the plugin is without configuring it.
func describe(p Plugin) hostabi.DescribeResponse {
	r := hostabi.DescribeResponse{}
	if d, ok := p.(Describer); ok {
		r.Name, r.Version = d.Describe()
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if r.Name == "" {
			r.Name = path.Base(bi.Path)
		}
		if r.Version == "" {
			r.Version = buildVersion(bi)
		}
	}
	if _, ok := p.(DeletionChecker); ok {
		r.Operations = append(r.Operations, hostabi.ExportConfirmDeleted)
	}
	r.Operations = append(r.Operations, eventOperations(p)...)
	if s, ok := p.(ServiceUser); ok {
		r.Services = append([]hostabi.Service{}, s.Services()...) // never nil: declared
	}
	return r
}

// buildVersion is the module version the go command stamped, else the VCS
// revision, else "".
func buildVersion(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value[:min(12, len(s.Value))]
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	return strings.TrimPrefix(rev+dirty, "-")
}

func setErr(e *hostabi.Error, err error) {
	if err != nil {
		e.Error = err.Error()
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(hostabi.Error{Error: "encode response: " + err.Error()})
	}
	return b
}

// notImplemented is the answer to an optional export the plugin does not
// provide; the host then falls back (a full listing, no events, no proof).
func notImplemented(export string) error {
	return fmt.Errorf("%s is not implemented by this plugin", export)
}
