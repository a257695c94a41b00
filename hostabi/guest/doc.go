// Package guest is the plugin SDK. A plugin's main package implements
// Plugin with ordinary Go methods (and, optionally, DeletionChecker,
// Describer and ServiceUser) and calls Run from init; this package
// provides the wasm exports of the host ABI (hostabi/ABI.md), the memory
// handling and the JSON encoding, and HTTP and Log through the host.
//
//	type source struct{ ... }
//
//	func (s *source) Configure(cfg []byte) (string, error) { ... }
//	func (s *source) ListNodes(req hostabi.ListNodesRequest) ([]hostabi.Node, error) {
//		resp, err := guest.HTTP(guest.HTTPRequest{Service: "baremetal", Path: "/v1/nodes?limit=1000"})
//		...
//	}
//
//	func init() { guest.Run(&source{}) }
//	func main() {}
//
// A Go client library that takes an http.RoundTripper or an *http.Client
// (govmomi, gophercloud, a generated REST client) runs in a plugin with
// Transport: the URL's host names the granted service, the host adds the
// credentials.
//
//	hc := &http.Client{Transport: guest.Transport{}}
//	resp, err := hc.Get("http://baremetal/v1/nodes?limit=1000")
//
// Build with GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared. The
// package also builds natively, so plugin code can be unit-tested without
// a host: SetHTTPForTest and SetLogForTest stand in for the host, and
// internal/testing/guesttest runs the same tests natively and in the sandbox.
//
// It must never reach outside the sandbox except through the host
// functions declared in its *_wasip1.go files.
package guest
