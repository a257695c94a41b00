package main

// pluginTemplates are the files `engine plugin new` writes (text/template:
// .Name is the plugin's name, .SDKVersion this engine's version). The
// go.mod is the one docs/PLUGIN-SDK.md shows; a test keeps them equal.
var pluginTemplates = map[string]string{
	"go.mod": `module example.com/rpengine-plugin-{{.Name}}

go 1.26.0

require github.com/rpengine/rpengine/hostabi {{.SDKVersion}}

// The SDK is on no module proxy: engine plugin new wrote its source here.
replace github.com/rpengine/rpengine/hostabi => ./sdk/hostabi
`,

	"main.go": `// Command {{.Name}} is an rpengine inventory plugin (a wasip1 reactor):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o {{.Name}}.wasm .
//	engine plugin test {{.Name}}.wasm
//
// It lists the nodes of its [plugin.config] table; replace the listing
// with calls to your inventory (guest.Transport carries HTTP through the
// host to the services granted in [plugin.services]).
package main

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/guest"
)

// version is this plugin's version: engine plugin inspect shows it, and
// rpengine_plugin_info{version} carries it.
var version = "0.1.0"

// config is the [plugin.config] table.
type config struct {
	Nodes []hostabi.Node ` + "`json:\"nodes\"`" + `
}

type plugin struct{ cfg config }

// Describe names the plugin before it is configured.
func (p *plugin) Describe() (name, ver string) { return "{{.Name}}", version }

// Configure refuses what it does not know, naming it.
func (p *plugin) Configure(raw []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var c config
	if err := dec.Decode(&c); err != nil {
		return "", fmt.Errorf("plugin.config: %w", err)
	}
	if len(c.Nodes) == 0 {
		c.Nodes = []hostabi.Node{
			{UUID: "5a0c5a3e-0000-4000-8000-000000000001", Name: "{{.Name}}-1", ResourceClass: "baremetal-small", PowerState: "power off", ProvisionState: "available"},
			{UUID: "5a0c5a3e-0000-4000-8000-000000000002", Name: "{{.Name}}-2", ResourceClass: "baremetal-small", PowerState: "power off", ProvisionState: "available"},
		}
	}
	p.cfg = c
	return "{{.Name}}", nil
}

// ListNodes returns every node in scope, or an error: never a part.
func (p *plugin) ListNodes(hostabi.ListNodesRequest) ([]hostabi.Node, error) {
	return p.cfg.Nodes, nil
}

// ListInstances returns the consumers placed on the nodes: none here.
func (p *plugin) ListInstances() ([]hostabi.Instance, error) { return []hostabi.Instance{}, nil }

// Services declares the HTTP services the plugin calls: none here.
func (p *plugin) Services() []hostabi.Service { return []hostabi.Service{} }

func init() { guest.Run(&plugin{}) }

// main is not called in a reactor (-buildmode=c-shared); the host calls
// the exports the SDK registers.
func main() {}
`,

	"README.md": `# {{.Name}}: an rpengine plugin

Written by ` + "`engine plugin new {{.Name}}`" + ` (rpengine {{.SDKVersion}}). It builds here, outside
the rpengine repository: ` + "`sdk/hostabi`" + ` is the SDK's source, which ` + "`go.mod`" + ` replaces the
module with (the module is served by no module proxy).

    GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o {{.Name}}.wasm .
    engine plugin test {{.Name}}.wasm       # the conformance kit: PASS or FAIL per check
    engine plugin inspect {{.Name}}.wasm    # name, version, capabilities

To move to a newer SDK, run ` + "`engine plugin new`" + ` of that release in a scratch directory and
copy its ` + "`sdk/`" + ` over this one (the plugin ABI version is in sdk/hostabi/abi.go).
`,
}
