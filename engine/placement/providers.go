package placement

import (
	"context"
	"fmt"
	"net/url"
	"strings"
)

// ListProviders returns every provider matching query (nil = all) with
// its generation, in one request: Placement does not paginate.
func (c *Client) ListProviders(ctx context.Context, query url.Values) ([]Provider, error) {
	var out providerList
	path := "resource_providers"
	if len(query) > 0 {
		path += "?" + query.Encode()
	}
	if err := c.do(ctx, "GET", path, nil, listing{c.maxList, true, out.add}, 200); err != nil {
		return nil, err
	}
	return out, nil
}

// ProviderGenerations is ListProviders reduced to uuid -> generation,
// decoded without the rest: the idle cycle's one request. sizeHint
// presizes the map (the providers expected).
func (c *Client) ProviderGenerations(ctx context.Context, query url.Values, sizeHint int) (map[string]Generation, error) {
	out := make(generationMap, sizeHint)
	path := "resource_providers"
	if len(query) > 0 {
		path += "?" + query.Encode()
	}
	if err := c.do(ctx, "GET", path, nil, listing{c.maxList, false, out.add}, 200); err != nil {
		return nil, err
	}
	return out, nil
}

// GetProvider reads one provider; ErrNotFound if it does not exist.
func (c *Client) GetProvider(ctx context.Context, uuid string) (Provider, error) {
	var p Provider
	err := c.do(ctx, "GET", "resource_providers/"+url.PathEscape(uuid), nil, &p, 200)
	if err == nil && !strings.EqualFold(p.UUID, uuid) {
		err = fmt.Errorf("get provider %s: answer names %s", uuid, quoteCut(p.UUID))
	}
	if err == nil {
		err = validGeneration(p.Generation)
	}
	return p, err
}

// CreateProvider creates a root provider and returns it with the
// generation from the response body (microversion 1.20+).
func (c *Client) CreateProvider(ctx context.Context, uuid, name string) (Provider, error) {
	var p Provider
	in := map[string]string{"uuid": uuid, "name": name}
	if err := c.do(ctx, "POST", "resource_providers", in, &p, 200); err != nil {
		return p, err
	}
	if p.UUID != uuid {
		return p, fmt.Errorf("create provider %s: answer names %s", uuid, quoteCut(p.UUID))
	}
	if err := validGeneration(p.Generation); err != nil {
		return p, fmt.Errorf("create provider %s: %w", uuid, err)
	}
	return p, nil
}

// DeleteProvider deletes a provider. Placement refuses (ErrProviderInUse)
// while it has allocations; the engine never removes them.
func (c *Client) DeleteProvider(ctx context.Context, uuid string) error {
	return c.do(ctx, "DELETE", "resource_providers/"+url.PathEscape(uuid), nil, nil, 204)
}

// Inventories reads a provider's inventory and its generation.
func (c *Client) Inventories(ctx context.Context, uuid string) (Generation, map[string]Inventory, error) {
	var out inventories
	err := c.do(ctx, "GET", providerPath(uuid, "inventories"), nil, &out, 200)
	return out.Generation, out.Inventories, complete(err, out.Generation, "inventories", out.Inventories == nil)
}

// SetInventories replaces the whole inventory, guarded by gen. An empty
// map clears it: this is the only way the engine ever clears inventory.
func (c *Client) SetInventories(ctx context.Context, uuid string, gen Generation, inv map[string]Inventory) (Generation, error) {
	if inv == nil {
		inv = map[string]Inventory{}
	}
	var out inventories
	err := c.do(ctx, "PUT", providerPath(uuid, "inventories"), inventories{gen, inv}, &out, 200)
	return written(out.Generation, err)
}

// Traits reads a provider's traits and its generation.
func (c *Client) Traits(ctx context.Context, uuid string) (Generation, []string, error) {
	var out traitSet
	err := c.do(ctx, "GET", providerPath(uuid, "traits"), nil, &out, 200)
	return out.Generation, out.Traits, complete(err, out.Generation, "traits", out.Traits == nil)
}

// SetTraits replaces the provider's traits, guarded by gen.
func (c *Client) SetTraits(ctx context.Context, uuid string, gen Generation, set []string) (Generation, error) {
	if set == nil {
		set = []string{}
	}
	var out traitSet
	err := c.do(ctx, "PUT", providerPath(uuid, "traits"), traitSet{gen, set}, &out, 200)
	return written(out.Generation, err)
}

// Aggregates reads a provider's aggregates and its generation.
func (c *Client) Aggregates(ctx context.Context, uuid string) (Generation, []string, error) {
	var out aggregateSet
	err := c.do(ctx, "GET", providerPath(uuid, "aggregates"), nil, &out, 200)
	return out.Generation, out.Aggregates, complete(err, out.Generation, "aggregates", out.Aggregates == nil)
}

// SetAggregates replaces the provider's aggregates, guarded by gen.
func (c *Client) SetAggregates(ctx context.Context, uuid string, gen Generation, set []string) (Generation, error) {
	if set == nil {
		set = []string{}
	}
	var out aggregateSet
	err := c.do(ctx, "PUT", providerPath(uuid, "aggregates"), aggregateSet{gen, set}, &out, 200)
	return written(out.Generation, err)
}

// Usages reads what the provider's allocations consume, per class.
func (c *Client) Usages(ctx context.Context, uuid string) (Generation, map[string]int64, error) {
	var out struct {
		Generation Generation       `json:"resource_provider_generation"`
		Usages     map[string]int64 `json:"usages"`
	}
	err := c.do(ctx, "GET", providerPath(uuid, "usages"), nil, &out, 200)
	return out.Generation, out.Usages, complete(err, out.Generation, "usages", out.Usages == nil)
}

func providerPath(uuid, sub string) string {
	return "resource_providers/" + url.PathEscape(uuid) + "/" + sub
}

type inventories struct {
	Generation  Generation           `json:"resource_provider_generation"`
	Inventories map[string]Inventory `json:"inventories"`
}

type traitSet struct {
	Generation Generation `json:"resource_provider_generation"`
	Traits     []string   `json:"traits"`
}

type aggregateSet struct {
	Generation Generation `json:"resource_provider_generation"`
	Aggregates []string   `json:"aggregates"`
}

// complete checks that a read's answer held the generation and the key
// asked for: read as empty, a missing key would be "corrected" by a write.
func complete(err error, g Generation, key string, missing bool) error {
	if err != nil {
		return err
	}
	if g == "" {
		return fmt.Errorf("placement answered a read of %s without resource_provider_generation", key)
	}
	if missing {
		return fmt.Errorf("placement answered a read without %q", key)
	}
	return validGeneration(g)
}

// written checks that a successful write's answer carries the new
// generation: without it the next write could not be guarded.
func written(g Generation, err error) (Generation, error) {
	if err == nil && g == "" {
		return "", fmt.Errorf("placement answered a write without resource_provider_generation")
	}
	if err == nil {
		if err = validGeneration(g); err != nil {
			return "", fmt.Errorf("placement answered a write with %w", err)
		}
	}
	return g, err
}
