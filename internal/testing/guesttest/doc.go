// Package guesttest runs a plugin's tests twice: natively, calling the
// plugin's Go code through the SDK's own encoding, and through wazero on
// the plugin built for GOOS=wasip1, exactly as the engine loads it. Both
// runs hand the test a *wasmhost.Plugin, so the test is written once. It
// also builds plugins for tests, once per test process, and times ways of
// making the same call against each other in one benchmark (Compare).
//
// It is for tests only: never import it from the engine or a plugin.
//
//	func TestListsTheWorld(t *testing.T) {
//		guesttest.Run(t, ".", func() guest.Plugin { return &myPlugin{} }, wasmhost.Options{},
//			func(t *testing.T, load guesttest.Loader) {
//				p := load.OK(t, map[string]any{"nodes": 3})
//				nodes, err := p.ListNodes(context.Background(), hostabi.ListNodesRequest{})
//				...
//			})
//	}
package guesttest
