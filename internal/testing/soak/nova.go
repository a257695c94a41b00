package soak

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// nova plays the compute service's side of Placement between cycles:
// freeing an instance's allocations the two ways nova does. Its requests
// go to the fake directly and happen before the request log is reset, so
// the engine's log holds the engine's requests only.
type nova struct {
	base string
	hc   *http.Client
}

func newNova(base string) *nova {
	return &nova{base: base, hc: &http.Client{Timeout: 10 * time.Second}}
}

// free removes a consumer's allocations: normally with PUT {} guarded by
// the consumer generation, which bumps the provider's generation; with
// force, DELETE, which does not (as on the real server).
func (n *nova) free(consumer string, force bool) error {
	if force {
		_, err := n.do("DELETE", "/allocations/"+consumer, nil, nil, 204, 404)
		return err
	}
	var cur struct {
		ConsumerGeneration *int64 `json:"consumer_generation"`
		ProjectID          string `json:"project_id"`
		UserID             string `json:"user_id"`
	}
	if _, err := n.do("GET", "/allocations/"+consumer, nil, &cur, 200); err != nil {
		return err
	}
	if cur.ConsumerGeneration == nil {
		return nil // nothing allocated any more
	}
	body := map[string]any{
		"allocations": map[string]any{}, "consumer_generation": *cur.ConsumerGeneration,
		"project_id": cur.ProjectID, "user_id": cur.UserID, "consumer_type": "INSTANCE",
	}
	_, err := n.do("PUT", "/allocations/"+consumer, body, nil, 204)
	return err
}

func (n *nova) do(method, path string, in, out any, ok ...int) (int, error) {
	var body bytes.Buffer
	if in != nil {
		if err := json.NewEncoder(&body).Encode(in); err != nil {
			return 0, err
		}
	}
	req, err := http.NewRequest(method, n.base+path, &body)
	if err != nil {
		return 0, err
	}
	req.Header.Set("X-Auth-Token", "admin")
	req.Header.Set("OpenStack-API-Version", "placement 1.39")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := n.hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	for _, s := range ok {
		if resp.StatusCode == s {
			if out != nil && s == 200 {
				return s, json.NewDecoder(resp.Body).Decode(out)
			}
			return s, nil
		}
	}
	return resp.StatusCode, fmt.Errorf("nova: %s %s: status %d", method, path, resp.StatusCode)
}
