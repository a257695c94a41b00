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
}

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
