package placement

import "context"

// ProviderAllocations reads the allocations against one provider:
// consumer uuid -> resource class -> amount. Read-only; for explain and
// audit, which name each consumer.
func (c *Client) ProviderAllocations(ctx context.Context, uuid string) (map[string]map[string]int64, error) {
	var out struct {
		Allocations map[string]struct {
			Resources map[string]int64 `json:"resources"`
		} `json:"allocations"`
	}
	if err := c.do(ctx, "GET", providerPath(uuid, "allocations"), nil, &out, 200); err != nil {
		return nil, err
	}
	got := make(map[string]map[string]int64, len(out.Allocations))
	for consumer, a := range out.Allocations {
		got[consumer] = a.Resources
	}
	return got, nil
}
