//go:build wasip1

package guest

import (
	"unsafe"

	"github.com/rpengine/rpengine/hostabi/projection"
)

// jsonProject asks the host to project doc by spec and write the frame to
// out. It returns the frame's length; if that exceeds outCap nothing was
// written and the caller retries with a buffer that large.
//
//go:wasmimport rpengine json_project
func jsonProject(doc *byte, docLen uint32, spec *byte, specLen uint32, out *byte, outCap uint32) uint32

// Project decodes doc as p says, natively in the host: the guest only
// reads the compact frame the host writes back.
func Project(doc []byte, p Projection) (Records, error) {
	spec, err := projection.EncodeSpec(p)
	if err != nil {
		return Records{}, err
	}
	// Strings never outgrow their JSON text and skipped members cost
	// nothing, so unless most requested fields are missing the frame is
	// smaller than the document (a node page's is about 55%); otherwise
	// the host says how much it needs and we ask again.
	out := make([]byte, len(doc)+4096)
	for {
		n := jsonProject(ptr(doc), uint32(len(doc)), ptr(spec), uint32(len(spec)), ptr(out), uint32(len(out)))
		if int(n) <= len(out) {
			return projection.ParseWire(out[:n])
		}
		out = make([]byte, n)
	}
}

func ptr(b []byte) *byte {
	if len(b) == 0 {
		return nil
	}
	return (*byte)(unsafe.Pointer(unsafe.SliceData(b)))
}
