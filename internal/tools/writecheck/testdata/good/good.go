// Package good only reads Placement, for the test of writecheck.
package good

import (
	"context"

	"github.com/rpengine/rpengine/engine/placement"
)

// Traits reads a provider's traits: a read is no write.
func Traits(pc *placement.Client, uuid string) ([]string, error) {
	_, ts, err := pc.Traits(context.Background(), uuid)
	return ts, err
}
