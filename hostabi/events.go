package hostabi

// Optional exports for an event-driven engine (ABI.md §2, "Events"). A
// plugin with both lets the engine act on its source's notifications
// between full cycles; one without them keeps working as before.
const (
	// ExportMapEvents maps a batch of bus messages to the node uuids each
	// concerns. The plugin interprets the message; the host stays neutral.
	ExportMapEvents = "rpengine_map_events"
	// ExportReadNodes reads a given set of nodes (or, with Instances set,
	// the consumers placed on them) straight from the source.
	ExportReadNodes = "rpengine_read_nodes"
	// ExportRecentNodes lists the nodes the source changed last, newest
	// first: the engine's probe for changes the bus does not announce.
	// Optional apart from the other two.
	ExportRecentNodes = "rpengine_recent_nodes"
)

// Bounds on the event operations' requests and answers.
const (
	// MaxEventsPerCall is the most messages one map_events request holds.
	MaxEventsPerCall = 1000
	// MaxNodesPerEvent is the most node uuids one message may map to.
	MaxNodesPerEvent = 100
	// MaxReadNodes is the most uuids one read_nodes request asks.
	MaxReadNodes = 1000
	// MaxRecentNodes is the most nodes one recent_nodes request asks.
	MaxRecentNodes = 1000
	// MaxChangedLength bounds each of recent_nodes' change stamps.
	MaxChangedLength = 64
)

// EventMessage is one message as the bus delivered it.
type EventMessage struct {
	// Body is the message body as text (invalid UTF-8 becomes U+FFFD).
	Body string `json:"body"`
	// Topic is the routing key it was published with (for Ironic
	// "ironic_versioned_notifications.info").
	Topic string `json:"topic,omitempty"`
}

// MapEventsRequest is the input of ExportMapEvents.
type MapEventsRequest struct {
	Events []EventMessage `json:"events"`
}

// MappedEvent is what the plugin read from one message.
type MappedEvent struct {
	// Nodes are the uuids of the nodes the message concerns; empty when
	// it concerns none (another kind of object, a start notification).
	Nodes []string `json:"nodes"`
	// Time is when the source says the change happened (RFC 3339), for
	// the engine's lag histogram; "" if the message does not say.
	Time string `json:"time,omitempty"`
	// Kind names the message (Ironic's event_type), for the log.
	Kind string `json:"kind,omitempty"`
	// Error says the message could not be read: the engine then runs a
	// full cycle, since it cannot know which nodes it was about.
	Error string `json:"error,omitempty"`
}

// MapEventsResponse answers ExportMapEvents: one MappedEvent per message
// asked, in the same order.
type MapEventsResponse struct {
	Error
	Events []MappedEvent `json:"events"`
}

// ReadNodesRequest is the input of ExportReadNodes.
type ReadNodesRequest struct {
	UUIDs []string `json:"uuids"`
	// Instances asks for the consumers placed on these nodes instead of
	// the nodes: the engine reads nodes first and instances second, as a
	// cycle does, in two calls.
	Instances bool `json:"instances,omitempty"`
	// NodeFields are as in ListNodesRequest: a node read has the fields a
	// listing would.
	NodeFields
}

// ReadNodesResponse answers ExportReadNodes. Nodes holds each asked node
// the source has, once, and no other; a node not in it is one the source
// did not return (gone, or never there), which the engine never takes as
// proof of anything. With Instances asked, Instances holds every consumer
// on the asked nodes, and Nodes is empty. Complete must be true: an
// answer is whole or an error.
type ReadNodesResponse struct {
	Error
	Complete  bool       `json:"complete"`
	Nodes     []Node     `json:"nodes"`
	Instances []Instance `json:"instances"`
}

// RecentNodesRequest is the input of ExportRecentNodes.
type RecentNodesRequest struct {
	// Limit is how many of the most recently changed nodes to return.
	Limit int `json:"limit"`
}

// RecentNodesResponse answers ExportRecentNodes: the uuids of at most
// Limit nodes, the most recently changed first, and Changed[i] the
// source's own stamp of uuids[i]'s last change (Ironic's updated_at),
// compared only for equality. The engine reads the nodes it finds changed
// with read_nodes. Complete must be true.
type RecentNodesResponse struct {
	Error
	Complete bool     `json:"complete"`
	UUIDs    []string `json:"uuids"`
	Changed  []string `json:"changed"`
}
