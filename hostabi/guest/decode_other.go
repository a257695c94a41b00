//go:build !wasip1

package guest

// Project decodes doc as p says. In a native build (tests, benchmarks) it
// runs the host's decoder in process, the same code a Wasm plugin reaches
// through the host, so the plugin's own work is identical in both builds.
func Project(doc []byte, p Projection) (Records, error) { return ProjectLocal(doc, p) }
