package placement

import (
	"bytes"
	"errors"
	"fmt"
)

// Generation is a provider generation exactly as the server sent it.
type Generation string

// MarshalJSON sends the generation back byte for byte.
func (g Generation) MarshalJSON() ([]byte, error) {
	if g == "" {
		return nil, errors.New("placement: no generation to send")
	}
	return []byte(g), nil
}

// UnmarshalJSON keeps the raw value; null is refused because a write
// needs a real generation.
func (g *Generation) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || bytes.Equal(b, []byte("null")) {
		return fmt.Errorf("placement: missing generation")
	}
	*g = Generation(b)
	return nil
}

// Inventory is one complete inventory record; records are always sent and
// compared whole, so a foreign change to any field is seen and corrected.
type Inventory struct {
	Total           int64   `json:"total"`
	Reserved        int64   `json:"reserved"`
	MinUnit         int64   `json:"min_unit"`
	MaxUnit         int64   `json:"max_unit"`
	StepSize        int64   `json:"step_size"`
	AllocationRatio float64 `json:"allocation_ratio"`
}

// Provider is a resource provider as listed.
type Provider struct {
	UUID       string     `json:"uuid"`
	Name       string     `json:"name"`
	Generation Generation `json:"generation"`
	ParentUUID *string    `json:"parent_provider_uuid,omitempty"`
}
