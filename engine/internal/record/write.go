package record

import "github.com/rpengine/rpengine/engine/placement"

// Op names a kind of write.
type Op string

// The writes, named as Placement's operations.
const (
	OpCreate     Op = "create_provider"
	OpTraits     Op = "set_traits"
	OpInventory  Op = "set_inventories"
	OpAggregates Op = "set_aggregates"
	// OpDelete is a provider deletion, planned only with proof.
	OpDelete Op = "delete_provider"
	// OpHold and OpReleaseHold are the hold writes beside nova.
	OpHold        Op = "hold"
	OpReleaseHold Op = "release_hold"
)

// Write is one change to one provider. Only the field of its Op is set.
type Write struct {
	Op         Op                             `json:"op"`
	UUID       string                         `json:"uuid"`
	Name       string                         `json:"name,omitempty"`
	Inventory  map[string]placement.Inventory `json:"inventories,omitempty"`
	Traits     []string                       `json:"traits,omitempty"`
	Aggregates []string                       `json:"aggregates,omitempty"`
}
