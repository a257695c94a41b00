package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// BareCreate is the ceiling: a plain net/http client making the minimal
// requests for the same end state (create, traits, inventory; the class
// and traits created once up front), with the same concurrency.
func BareCreate(ctx context.Context, url string, uuids []string, owner string, concurrency int) (time.Duration, error) {
	c := &http.Client{Transport: &http.Transport{MaxConnsPerHost: concurrency, MaxIdleConnsPerHost: concurrency}}
	for _, p := range []string{"/resource_classes/CUSTOM_BAREMETAL_GOLD", "/traits/" + owner} {
		if _, err := do(ctx, c, "PUT", url+p, nil); err != nil {
			return 0, err
		}
	}
	start := time.Now()
	work := make(chan string)
	errs := make(chan error, concurrency)
	var wg sync.WaitGroup
	for range concurrency {
		wg.Go(func() {
			for u := range work {
				if err := bareOne(ctx, c, url, u, owner); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for _, u := range uuids {
		work <- u
	}
	close(work)
	wg.Wait()
	close(errs)
	return time.Since(start), <-errs
}

func bareOne(ctx context.Context, c *http.Client, url, uuid, owner string) error {
	var rp struct{ Generation json.RawMessage }
	b, err := do(ctx, c, "POST", url+"/resource_providers", map[string]string{"uuid": uuid, "name": uuid})
	if err != nil {
		return err
	}
	json.Unmarshal(b, &rp)
	var g struct {
		Gen json.RawMessage `json:"resource_provider_generation"`
	}
	b, err = do(ctx, c, "PUT", url+"/resource_providers/"+uuid+"/traits",
		map[string]any{"resource_provider_generation": rp.Generation, "traits": []string{owner, "COMPUTE_NODE"}})
	if err != nil {
		return err
	}
	json.Unmarshal(b, &g)
	inv := map[string]any{"CUSTOM_BAREMETAL_GOLD": map[string]any{"total": 1, "reserved": 0, "min_unit": 1,
		"max_unit": 1, "step_size": 1, "allocation_ratio": 1.0}}
	_, err = do(ctx, c, "PUT", url+"/resource_providers/"+uuid+"/inventories",
		map[string]any{"resource_provider_generation": g.Gen, "inventories": inv})
	return err
}

func do(ctx context.Context, c *http.Client, method, url string, body any) ([]byte, error) {
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, _ := http.NewRequestWithContext(ctx, method, url, rd)
	req.Header.Set("X-Auth-Token", "admin")
	req.Header.Set("OpenStack-API-Version", "placement 1.39")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	buf.ReadFrom(resp.Body)
	if resp.StatusCode >= 300 {
		return nil, fmt.Errorf("%s %s: %d %s", method, url, resp.StatusCode, buf.String())
	}
	return buf.Bytes(), nil
}
