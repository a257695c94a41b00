package guest

import "github.com/rpengine/rpengine/hostabi"

// Plugin is what an inventory source implements: ordinary Go methods. The
// SDK turns each into its export, decodes the request and encodes the
// answer. A panic is not recovered: it crashes the instance, the host
// reports it with the panic's message and starts a fresh instance.
type Plugin interface {
	// Configure receives the [plugin.config] table as JSON. It is called
	// once per instance, before any operation.
	Configure(config []byte) (name string, err error)
	// ListNodes returns every node in scope, or an error: never a part.
	ListNodes(req hostabi.ListNodesRequest) ([]hostabi.Node, error)
	// ListInstances returns the consumers placed on the nodes.
	ListInstances() ([]hostabi.Instance, error)
}

// DeletionChecker is the optional capability to prove nodes deleted. A
// plugin implementing it gets hostabi.ExportConfirmDeleted. For each uuid
// asked it answers deleted (the source positively says it is gone, e.g.
// a 404), present, or neither (unknown: the check failed). The engine
// deletes a provider only on proof, so when in doubt answer neither.
type DeletionChecker interface {
	ConfirmDeleted(uuids []string) (deleted, present []string, err error)
}

// Describer is an optional interface to set the name and version the
// plugin reports before it is configured (engine plugin inspect). For
// what it leaves empty the SDK uses the main package's last path element
// and the version the go command stamped into the build, if any.
type Describer interface {
	Describe() (name, version string)
}

// ServiceUser is an optional interface to declare the HTTP services the
// plugin calls (hostabi.DescribeResponse.Services): the host refuses to
// load the plugin while one is not granted, naming it. Services is called
// by describe, which at load runs after Configure, so it may depend on the
// configuration; return an empty list, not nil, for "none".
type ServiceUser interface {
	Services() []hostabi.Service
}

//lint:ignore U1000 read by the wasip1 exports (exports_wasip1.go), which a host build leaves out
var plugin Plugin

// Run registers p. Call it from main's init or main; the host calls the
// exports afterwards. Under -buildmode=c-shared main returns at once.
func Run(p Plugin) { plugin = p }
