package placement

import (
	"context"
	"fmt"
	"net/url"
	"slices"
)

// TraitsStartingWith lists the traits whose names start with prefix,
// sorted (GET /traits?name=startswith:...). The engines of a fleet use it
// to find the trait that names this Placement.
func (c *Client) TraitsStartingWith(ctx context.Context, prefix string) ([]string, error) {
	var out struct {
		Traits []string `json:"traits"`
	}
	if err := c.do(ctx, "GET", "traits?name=startswith:"+url.QueryEscape(prefix), nil, &out, 200); err != nil {
		return nil, fmt.Errorf("list traits %s*: %w", prefix, err)
	}
	slices.Sort(out.Traits)
	return out.Traits, nil
}
