package bench

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// Seed asks the fake child for the providers of Fleet(n, salt), each
// carrying trait (an owner marker): an engine that owns n providers
// without the cold cycle that would create them.
func (c *Child) Seed(n int, salt uint32, trait string) error {
	q := url.Values{"n": {strconv.Itoa(n)}, "salt": {strconv.FormatUint(uint64(salt), 10)}, "trait": {trait}}
	resp, err := http.Get(c.URL + "/_bench/seed?" + q.Encode())
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("seed: %s: %s", resp.Status, b)
	}
	return nil
}

func seed(fake *placementfake.Server, q url.Values) error {
	n, err := strconv.Atoi(q.Get("n"))
	if err != nil {
		return err
	}
	salt, err := strconv.ParseUint(q.Get("salt"), 10, 32)
	if err != nil {
		return err
	}
	for _, node := range Fleet(n, uint32(salt)) {
		if err := fake.CreateProvider(node.UUID, node.UUID); err != nil {
			return err
		}
		if err := fake.AddTrait(node.UUID, q.Get("trait")); err != nil {
			return err
		}
	}
	return nil
}
