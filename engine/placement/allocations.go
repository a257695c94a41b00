package placement

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
)

// Consumer is one consumer's allocations as Placement has them (1.28+).
type Consumer struct {
	// Resources is provider uuid -> resource class -> amount.
	Resources map[string]map[string]int64
	// Generation is the consumer generation, opaque; nil when the consumer
	// has no allocations (a PUT must then send null).
	Generation json.RawMessage
	ProjectID  string
	UserID     string
	Type       string // consumer_type, 1.38+
}

// Exists reports whether the consumer holds any allocation.
func (c Consumer) Exists() bool { return len(c.Resources) > 0 }

// GetConsumer reads one consumer's allocations; a consumer without any is
// returned empty, not as an error (Placement answers 200 with {}).
func (c *Client) GetConsumer(ctx context.Context, consumer string) (Consumer, error) {
	var out struct {
		Allocations map[string]struct {
			Resources map[string]int64 `json:"resources"`
		} `json:"allocations"`
		Generation json.RawMessage `json:"consumer_generation"`
		ProjectID  string          `json:"project_id"`
		UserID     string          `json:"user_id"`
		Type       string          `json:"consumer_type"`
	}
	if err := c.do(ctx, "GET", "allocations/"+url.PathEscape(consumer), nil, &out, 200); err != nil {
		return Consumer{}, err
	}
	got := Consumer{Resources: map[string]map[string]int64{}, ProjectID: out.ProjectID, UserID: out.UserID, Type: out.Type}
	for rp, a := range out.Allocations {
		got.Resources[rp] = a.Resources
	}
	if got.Exists() && len(out.Generation) > 0 && string(out.Generation) != "null" {
		if err := validGeneration(Generation(out.Generation)); err != nil {
			return Consumer{}, fmt.Errorf("consumer %s: consumer_%w", consumer, err)
		}
		got.Generation = out.Generation
	}
	return got, nil
}

// consumerBody is one consumer's allocations as PUT /allocations/{c} and
// POST /reshaper take them: a nil generation means a new consumer, and
// the consumer type goes only where the microversion knows it (1.38+).
func (c *Client) consumerBody(want Consumer) map[string]any {
	allocs := map[string]any{}
	for rp, res := range want.Resources {
		allocs[rp] = map[string]any{"resources": res}
	}
	gen := want.Generation
	if gen == nil {
		gen = json.RawMessage("null")
	}
	body := map[string]any{"allocations": allocs, "project_id": want.ProjectID, "user_id": want.UserID,
		"consumer_generation": gen}
	if !less(c.Microversion(), "1.38") {
		body["consumer_type"] = want.Type
	}
	return body
}

// DeleteConsumer removes all of a consumer's allocations. The engine calls
// it only for consumers it made itself (hold.go); ErrNotFound means there
// was nothing to remove.
func (c *Client) DeleteConsumer(ctx context.Context, consumer string) error {
	return c.do(ctx, "DELETE", "allocations/"+url.PathEscape(consumer), nil, nil, 204)
}

// ProjectUsage sums what the consumers of one project and user use, over
// every class (GET /usages, 1.9+; user "": the whole project): one
// request to tell whether a set of consumers the caller believes exist
// still add up.
func (c *Client) ProjectUsage(ctx context.Context, project, user string) (int64, error) {
	var out struct {
		Usages map[string]json.RawMessage `json:"usages"`
	}
	q := url.Values{"project_id": {project}}
	if user != "" {
		q.Set("user_id", user)
	}
	if err := c.do(ctx, "GET", "usages?"+q.Encode(), nil, &out, 200); err != nil {
		return 0, err
	}
	var sum int64
	for rc, raw := range out.Usages {
		// 1.38+ groups by consumer type: {"CLASS": n} becomes
		// {"RPENGINE_HOLD": {"CLASS": n, "consumer_count": k}, ...}.
		var n int64
		if json.Unmarshal(raw, &n) == nil {
			sum += n
			continue
		}
		var byType map[string]int64
		if err := json.Unmarshal(raw, &byType); err != nil {
			return 0, fmt.Errorf("GET usages: malformed value for %s: %w", rc, err)
		}
		for k, v := range byType {
			if k != "consumer_count" {
				sum += v
			}
		}
	}
	return sum, nil
}
