package engine

import (
	"errors"
	"fmt"
	"testing"

	"github.com/rpengine/rpengine/engine/placement"
)

// forgetMissing forgets exactly the names a refusal says are missing and
// the book holds, in Placement's own wordings (placement/handlers and
// exception.py of Placement 8.0).
func TestForgetMissingReadsPlacementsWords(t *testing.T) {
	held := []string{"rc:CUSTOM_GPU", "rc:CUSTOM_GOLD", "trait:CUSTOM_A", "trait:CUSTOM_B", "trait:COMPUTE_NODE"}
	api := func(status int, detail string) error {
		return fmt.Errorf("inventories: %w", &placement.APIError{Status: status, Detail: detail})
	}
	cases := []struct {
		name   string
		err    error
		forgot []string
		retry  bool // true without forgetting: a custom name already forgotten
	}{
		{"inventory", api(400, "Unknown resource class in inventory for resource provider 00000000-0000-4000-8000-000000000001: No such resource class CUSTOM_GPU."),
			[]string{"rc:CUSTOM_GPU"}, false},
		{"traits PUT", api(400, "No such trait CUSTOM_B, CUSTOM_A"), []string{"trait:CUSTOM_A", "trait:CUSTOM_B"}, false},
		{"traits 404", api(404, "No such trait(s): CUSTOM_A."), []string{"trait:CUSTOM_A"}, false},
		{"a class forgotten by another write", api(400, "No such resource class CUSTOM_OTHER."), nil, true},
		{"a standard trait the book never held", api(400, "No such trait HW_NEW"), nil, false},
		{"a trait's name in a class refusal: the trait kept", api(400, "No such resource class CUSTOM_A."), nil, true},
		{"another 400", api(400, "JSON does not validate: CUSTOM_GPU"), nil, false},
		{"a 409", api(409, "No such resource class CUSTOM_GPU."), nil, false},
		{"not an API error", errors.New("No such resource class CUSTOM_GPU."), nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newNameBook()
			for _, k := range held {
				b.add(k)
			}
			if got := b.forgetMissing(tc.err); got != (len(tc.forgot) > 0 || tc.retry) {
				t.Fatalf("forgetMissing = %v, want %v", got, len(tc.forgot) > 0 || tc.retry)
			}
			for _, k := range held {
				gone := !b.has(k)
				want := false
				for _, f := range tc.forgot {
					want = want || f == k
				}
				if gone != want {
					t.Errorf("%s forgotten = %v, want %v", k, gone, want)
				}
			}
		})
	}
}
