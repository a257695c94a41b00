//go:build wasip1

package guest

import "unsafe"

//go:wasmimport rpengine http_request
func hostHTTPRequest(req *byte, n uint32) uint32

//go:wasmimport rpengine http_response_read
func hostHTTPResponseRead(dst *byte, n uint32) uint32

func roundTrip(req HTTPRequest) (HTTPResponse, error) {
	frame, err := encodeHTTPRequest(req)
	if err != nil {
		return HTTPResponse{}, err
	}
	n := hostHTTPRequest(unsafe.SliceData(frame), uint32(len(frame)))
	resp := make([]byte, n+1) // +1: never pass a pointer to nothing
	got := hostHTTPResponseRead(unsafe.SliceData(resp), n)
	return decodeHTTPResponse(req, resp[:got])
}

// SetHTTPForTest has no effect in wasip1 builds, where HTTP always goes to
// the host; it exists so that test code builds for both.
func SetHTTPForTest(func(HTTPRequest) (HTTPResponse, error)) {}
