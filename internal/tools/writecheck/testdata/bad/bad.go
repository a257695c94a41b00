// Package bad writes to Placement outside the record's writer, for the
// test of writecheck: a call and a method value.
package bad

import (
	"context"

	"github.com/rpengine/rpengine/engine/placement"
)

// Mark creates a trait behind the record's back.
func Mark(pc *placement.Client) error { return pc.EnsureTrait(context.Background(), "CUSTOM_X") }

// Deleter hands out a delete.
func Deleter(pc *placement.Client) func(context.Context, string) error { return pc.DeleteProvider }
