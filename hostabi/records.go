package hostabi

// Node is one inventory item as a plugin sees it. Bare-metal sources set
// ResourceClass (one unit of CUSTOM_<class>); other hypervisors set
// Resources with explicit inventories. The engine, not the plugin, decides
// reservation, ownership and what to write.
type Node struct {
	UUID string `json:"uuid"`
	Name string `json:"name,omitempty"`

	// ResourceClass is the source's raw class name (Ironic's
	// resource_class, e.g. "baremetal-gold"); the engine normalises it.
	ResourceClass string `json:"resource_class,omitempty"`
	// Resources are explicit inventories keyed by Placement class name
	// (VCPU, MEMORY_MB, CUSTOM_...), for sources that are not bare metal.
	Resources map[string]Resource `json:"resources,omitempty"`
	Traits    []string            `json:"traits,omitempty"`

	// InstanceUUID is the consumer the source says occupies the node.
	InstanceUUID string `json:"instance_uuid,omitempty"`

	// State, as the source reports it. Empty means unknown (Ironic null).
	Maintenance          bool   `json:"maintenance,omitempty"`
	PowerState           string `json:"power_state,omitempty"`
	ProvisionState       string `json:"provision_state,omitempty"`
	TargetProvisionState string `json:"target_provision_state,omitempty"`
	Fault                string `json:"fault,omitempty"`
	Retired              bool   `json:"retired,omitempty"`

	// Scope, used by the engine to decide what it manages.
	Shard          string `json:"shard,omitempty"`
	ConductorGroup string `json:"conductor_group,omitempty"`

	// Owner and Properties are sent only when the request asks for them
	// (NodeFields): the engine's aggregate rules match on them. Owner is
	// the source's owner of the node (Ironic's owner, a project id).
	Owner string `json:"owner,omitempty"`
	// Properties holds the value of each property the request named that
	// the node has, keyed by the name as asked; no other key. A value
	// that is not a string is its JSON text (64, true).
	Properties map[string]string `json:"properties,omitempty"`

	// Invalid is set by the host, never sent by a plugin: the record broke
	// a per-node limit of the answer (ABI.md §7), so some of its values
	// are cut or missing. The engine quarantines the node; the rest of
	// the listing is used.
	Invalid *Invalid `json:"-"`
}

// Invalid says why the host marked a node's record unusable.
type Invalid struct {
	// Code is short and fixed: field_too_long, too_many_entries,
	// bad_utf8, bad_value.
	Code   string
	Reason string
}

// Codes of Invalid.
const (
	InvalidFieldTooLong   = "field_too_long"   // a string or number over plugin.max_field_length
	InvalidTooManyEntries = "too_many_entries" // traits or resources over plugin.max_traits, properties over those asked, or members over the cap
	InvalidUTF8           = "bad_utf8"         // a string that is not valid UTF-8
	InvalidValue          = "bad_value"        // a value of the wrong type, a bad flag, ratio or duplicate resource
)

// Resource is one explicit inventory record. Zero values take Placement's
// defaults (min_unit 1, max_unit total, step_size 1, allocation_ratio 1).
type Resource struct {
	Total           int64   `json:"total"`
	Reserved        int64   `json:"reserved,omitempty"`
	MinUnit         int64   `json:"min_unit,omitempty"`
	MaxUnit         int64   `json:"max_unit,omitempty"`
	StepSize        int64   `json:"step_size,omitempty"`
	AllocationRatio float64 `json:"allocation_ratio,omitempty"`
}

// Instance is a consumer the compute service has placed on a node.
type Instance struct {
	UUID     string `json:"uuid"`
	NodeUUID string `json:"node_uuid"`
}

// Error is the in-band error every response may carry. A plugin reports
// failure by setting it; the host never interprets a partial answer.
type Error struct {
	Error string `json:"error,omitempty"`
}

// ConfigureResponse answers ExportConfigure.
type ConfigureResponse struct {
	Error
	// Name identifies the plugin in logs and metrics.
	Name string `json:"name,omitempty"`
}

// ListNodesResponse answers ExportListNodes. Complete must be true: a
// plugin that could not list every node returns Error instead.
type ListNodesResponse struct {
	Error
	Nodes    []Node `json:"nodes"`
	Complete bool   `json:"complete"`
}

// ListInstancesResponse answers ExportListInstances.
type ListInstancesResponse struct {
	Error
	Instances []Instance `json:"instances"`
}

// ListNodesRequest is the input of ExportListNodes: the scope the engine
// manages, so a source can filter at the API. The engine filters again.
type ListNodesRequest struct {
	Shards          []string `json:"shards,omitempty"`
	ConductorGroups []string `json:"conductor_groups,omitempty"`
	NodeFields
	// Accept lists the encodings, besides JSON, in which the host takes
	// the answer (EncodingRecords). Absent: JSON only (older hosts).
	Accept []string `json:"accept,omitempty"`
}

// NodeFields are the optional node fields a request asks the source to
// fill (Node.Owner, Node.Properties); absent, the source sends neither.
// The engine asks only for what its rules name, so a node costs nothing
// more without them.
type NodeFields struct {
	Owner bool `json:"owner,omitempty"`
	// Properties are the names of the node properties wanted, in the
	// source's own terms (the Ironic plugin: "properties.<key>" or
	// "extra.<key>"). At most MaxProperties.
	Properties []string `json:"properties,omitempty"`
}

// MaxProperties bounds NodeFields.Properties: the host asks at most this
// many, and a node's Properties never holds more than were asked.
const MaxProperties = 16

// Empty reports whether f asks for nothing.
func (f NodeFields) Empty() bool { return !f.Owner && len(f.Properties) == 0 }

// ListInstancesRequest is the input of ExportListInstances. Older hosts
// send {}.
type ListInstancesRequest struct {
	// Accept is as in ListNodesRequest.
	Accept []string `json:"accept,omitempty"`
}

// ConfirmDeletedRequest is the input of ExportConfirmDeleted.
type ConfirmDeletedRequest struct {
	UUIDs []string `json:"uuids"`
}

// ConfirmDeletedResponse answers ExportConfirmDeleted. A uuid in neither
// list is unknown (e.g. the check itself failed): never proof of deletion.
type ConfirmDeletedResponse struct {
	Error
	Deleted []string `json:"deleted"`
	Present []string `json:"present"`
}

// DescribeResponse answers ExportDescribe: who the plugin is and which
// optional operations it implements. It needs no configuration.
type DescribeResponse struct {
	Error
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	// Operations lists the optional exports (e.g. ExportConfirmDeleted)
	// with an implementation behind them. An SDK exports every entry
	// point, so the host treats an optional operation as supported only
	// when it is both exported and listed here.
	Operations []string `json:"operations,omitempty"`
	// Services declares the HTTP services the plugin calls. Absent or
	// null: not declared (plugins older than this field), nothing is
	// checked. A list, even empty: every service the plugin may call
	// with its configuration; the host refuses to load it while one is
	// not granted in [plugin.services]. Describe runs after Configure at
	// load, so the list may depend on the configuration.
	Services []Service `json:"services"`
}

// Service is one HTTP service a plugin calls through ImportHTTPRequest.
type Service struct {
	// Name is what the plugin puts in HTTPRequestHead.Service, and so the
	// key the operator grants in [plugin.services].
	Name string `json:"name"`
	// Type is the service catalog type expected behind the name (e.g.
	// "baremetal"), empty for a service outside the catalog. It tells
	// the operator what to grant: name = "catalog:<type>".
	Type string `json:"type,omitempty"`
}

// HTTPRequestHead is the head of an ImportHTTPRequest frame; the frame's
// body is the request body.
type HTTPRequestHead struct {
	// Service names an endpoint granted in [plugin.services]; the plugin
	// never sees the URL's credentials or the token.
	Service string `json:"service"`
	Method  string `json:"method"`
	// Path is relative to the service endpoint and may carry a query.
	Path   string            `json:"path"`
	Header map[string]string `json:"header,omitempty"`
	// Project, if set, asks the host to project a 2xx response's JSON
	// body into records (ABI.md §6, "Projected responses"). A host that
	// predates it ignores the field and sends the body as is.
	Project *ProjectSpec `json:"project,omitempty"`
	// Keep, with Project, asks the host to project the 2xx body by Keep,
	// keep that projection for the rest of the operation (its number in
	// HTTPResponseHead.Ref) and send the plugin Project's part of it: the
	// answer can then refer to records the plugin never received
	// (EncodingRefs). Project must be within Keep (the same array, each
	// member with its kind). A host that predates it, or keeps nothing
	// for this operation, projects by Project alone: no Ref.
	Keep *ProjectSpec `json:"keep,omitempty"`
}

// HTTPResponseHead is the head of the response frame; its body is the
// response body. Error is set, and Status is 0, when the host refused or
// could not complete the request; an HTTP error status is not an Error.
type HTTPResponseHead struct {
	Status int               `json:"status"`
	Header map[string]string `json:"header,omitempty"`
	Error  string            `json:"error,omitempty"`
	// Projected says the body is the projection frame the request's
	// Project asked for, not the service's bytes.
	Projected bool `json:"projected,omitempty"`
	// Ref, when not 0, is the host's number for the projection it kept
	// (HTTPRequestHead.Keep): the frame a NodeRun names.
	Ref uint32 `json:"ref,omitempty"`
}
