package placement

import (
	"context"
	"fmt"
)

// Reshape replaces, in one transaction (POST /reshaper, 1.30+), the
// inventory of one provider and the allocations of one consumer on it.
// Nothing in between is visible to the scheduler: the engine uses it to
// put a hold and the inventory it guards in place together (hold.go),
// where two requests would offer the node between them.
func (c *Client) Reshape(ctx context.Context, provider string, gen Generation, inv map[string]Inventory,
	consumer string, want Consumer) error {
	if less(c.Microversion(), "1.30") {
		return fmt.Errorf("reshaper needs placement microversion 1.30; this one speaks %s", c.Microversion())
	}
	body := map[string]any{
		"inventories": map[string]any{provider: map[string]any{"resource_provider_generation": gen, "inventories": inv}},
		"allocations": map[string]any{consumer: c.consumerBody(want)},
	}
	return c.do(ctx, "POST", "reshaper", body, nil, 204)
}
