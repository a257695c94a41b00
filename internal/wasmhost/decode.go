package wasmhost

import (
	"context"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/rpengine/rpengine/hostabi/projection"
)

// importJSONProject is the host function behind guest.Project:
// (doc ptr, doc len, spec ptr, spec len, out ptr, out cap) -> frame len.
const importJSONProject = "json_project"

// withJSONProject adds the JSON projection capability to the host module:
// the host decodes a response body natively and writes compact records
// into guest memory (hostabi/RATIONALE.md, "JSON projection"). It grants
// nothing beyond CPU time: it reads and writes only the guest's own memory.
// The frame is capped at memoryLimit: one the guest could not hold would
// only cost the plugin host its memory (a frame can outgrow its document
// many times over: 8 bytes per field asked, per record).
func withJSONProject(b wazero.HostModuleBuilder, memoryLimit uint64) wazero.HostModuleBuilder {
	limit := int(min(memoryLimit, 1<<31))
	return b.NewFunctionBuilder().WithFunc(func(_ context.Context, m api.Module, doc, docLen, spec, specLen, out, outCap uint32) uint32 {
		return jsonProject(m, limit, doc, docLen, spec, specLen, out, outCap)
	}).Export(importJSONProject)
}

func jsonProject(m api.Module, limit int, doc, docLen, spec, specLen, out, outCap uint32) uint32 {
	mem := m.Memory()
	d, ok1 := mem.Read(doc, docLen)
	s, ok2 := mem.Read(spec, specLen)
	if !ok1 || !ok2 {
		return 0 // the guest reads an empty frame and fails
	}
	frame := projection.HostProjectCapped(d, s, limit) // d and s are views: nothing keeps them
	if uint32(len(frame)) <= outCap && !mem.Write(out, frame) {
		return 0
	}
	return uint32(len(frame))
}
