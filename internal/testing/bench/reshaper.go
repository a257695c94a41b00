package bench

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"
)

// ReshaperCreate is an experiment: create providers as the
// bare client does (POST, PUT traits), but write the inventories of each
// batch of new providers in one POST /reshaper (microversion 1.30, empty
// allocations): 2 + 1/batch requests per provider instead of 3. Batches
// run on concurrency connections. It is bench-only: the engine does not
// use it. A conflict fails the whole batch (reshaper is one transaction);
// the error is returned, nothing is retried here.
func ReshaperCreate(ctx context.Context, url string, uuids []string, owner string, batch, concurrency int) (time.Duration, error) {
	c := &http.Client{Transport: &http.Transport{MaxConnsPerHost: concurrency, MaxIdleConnsPerHost: concurrency}}
	for _, p := range []string{"/resource_classes/CUSTOM_BAREMETAL_GOLD", "/traits/" + owner} {
		if _, err := do(ctx, c, "PUT", url+p, nil); err != nil {
			return 0, err
		}
	}
	start := time.Now()
	work := make(chan []string)
	errs := make(chan error, concurrency)
	var wg sync.WaitGroup
	for range concurrency {
		wg.Go(func() {
			for b := range work {
				if err := reshapeBatch(ctx, c, url, b, owner); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for i := 0; i < len(uuids); i += batch {
		work <- uuids[i:min(i+batch, len(uuids))]
	}
	close(work)
	wg.Wait()
	close(errs)
	return time.Since(start), <-errs
}

func reshapeBatch(ctx context.Context, c *http.Client, url string, uuids []string, owner string) error {
	inv := map[string]any{"CUSTOM_BAREMETAL_GOLD": map[string]any{"total": 1, "reserved": 0, "min_unit": 1,
		"max_unit": 1, "step_size": 1, "allocation_ratio": 1.0}}
	body := map[string]any{}
	for _, u := range uuids {
		var rp struct{ Generation json.RawMessage }
		b, err := do(ctx, c, "POST", url+"/resource_providers", map[string]string{"uuid": u, "name": u})
		if err != nil {
			return err
		}
		json.Unmarshal(b, &rp)
		var g struct {
			Gen json.RawMessage `json:"resource_provider_generation"`
		}
		b, err = do(ctx, c, "PUT", url+"/resource_providers/"+u+"/traits",
			map[string]any{"resource_provider_generation": rp.Generation, "traits": []string{owner, "COMPUTE_NODE"}})
		if err != nil {
			return err
		}
		json.Unmarshal(b, &g)
		body[u] = map[string]any{"resource_provider_generation": g.Gen, "inventories": inv}
	}
	_, err := do(ctx, c, "POST", url+"/reshaper", map[string]any{"inventories": body, "allocations": map[string]any{}})
	return err
}
