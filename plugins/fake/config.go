package main

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/rpengine/rpengine/hostabi"
)

// config is [plugin.config]. Either Nodes > 0 (generated world) or
// Node/Instance lists (exact world); both may be combined.
type config struct {
	Nodes               int      `json:"nodes"`
	Seed                int64    `json:"seed"`
	ResourceClasses     []string `json:"resource_classes"`
	MaintenanceFraction float64  `json:"maintenance_fraction"`
	InstanceFraction    float64  `json:"instance_fraction"`
	Shards              []string `json:"shards"`

	Node     []hostabi.Node     `json:"node"`
	Instance []hostabi.Instance `json:"instance"`
	// Step scripts changes between and during calls (script.go).
	Step []step `json:"step"`
	// World names a granted service that holds the world; every operation
	// reads it afresh (remote.go), replacing the configured one.
	World string `json:"world"`

	// UnknownNodes are uuids confirm_deleted answers neither deleted nor
	// present about, as if the check failed for them.
	UnknownNodes []string `json:"unknown_nodes"`

	// Fault makes an operation misbehave: "error", "panic", "exit",
	// "spin" or "hog"; FaultIn names the operation: "list_nodes" (the
	// default), "list_instances" or "confirm_deleted".
	Fault   string `json:"fault"`
	FaultIn string `json:"fault_in"`
}

func parseConfig(raw []byte) (config, error) {
	var c config
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("fake plugin config: %w", err)
	}
	return c, c.validate()
}

func (c config) validate() error {
	switch {
	case c.Nodes < 0:
		return fmt.Errorf("fake plugin config: nodes = %d, want >= 0", c.Nodes)
	case c.MaintenanceFraction < 0 || c.MaintenanceFraction > 1:
		return fmt.Errorf("fake plugin config: maintenance_fraction = %v, want 0..1", c.MaintenanceFraction)
	case c.InstanceFraction < 0 || c.InstanceFraction > 1:
		return fmt.Errorf("fake plugin config: instance_fraction = %v, want 0..1", c.InstanceFraction)
	}
	switch c.Fault {
	case "", "error", "panic", "exit", "spin", "hog":
	default:
		return fmt.Errorf("fake plugin config: fault = %q, want error, panic, exit, spin or hog", c.Fault)
	}
	if err := checkSteps(c.Step); err != nil {
		return err
	}
	switch c.FaultIn {
	case "", "list_nodes", "list_instances", "confirm_deleted":
	default:
		return fmt.Errorf("fake plugin config: fault_in = %q, want list_nodes, list_instances or confirm_deleted", c.FaultIn)
	}
	return nil
}
