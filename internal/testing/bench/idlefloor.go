package bench

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
)

// idleFloor is the minimal idle job an idle cycle is measured against:
// fetch this engine's provider listing, find each provider's uuid and
// generation by searching the bytes (nothing checked, nothing else
// read), and compare them with the last cycle's. It trusts the answer's
// shape (uuid before generation, no escapes), which the engine may not.
type idleFloor struct {
	c    *http.Client
	url  string
	buf  bytes.Buffer      // reused: the job keeps no garbage per cycle
	last map[string]string // uuid -> generation, the last cycle's
}

func newIdleFloor(base, owner string) *idleFloor {
	return &idleFloor{c: &http.Client{}, last: map[string]string{},
		url: base + "/resource_providers?" + url.Values{"required": {owner}}.Encode()}
}

// run does the job once and returns how many providers are new or moved.
func (f *idleFloor) run(ctx context.Context) (int, error) {
	req, _ := http.NewRequestWithContext(ctx, "GET", f.url, nil)
	req.Header.Set("X-Auth-Token", "admin")
	req.Header.Set("OpenStack-API-Version", "placement 1.39")
	resp, err := f.c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	f.buf.Reset()
	if _, err := f.buf.ReadFrom(resp.Body); err != nil || resp.StatusCode != 200 {
		return 0, fmt.Errorf("minimal idle job: GET %s: %d %v", f.url, resp.StatusCode, err)
	}
	b, changed := f.buf.Bytes(), 0
	for {
		var uuid, gen []byte
		if uuid, b = member(b, `"uuid":`, '"'); uuid == nil {
			return changed, nil
		}
		if gen, b = member(b, `"generation":`, ','); gen == nil {
			return changed, fmt.Errorf("minimal idle job: provider %s without a generation", uuid)
		}
		if g, ok := f.last[string(uuid)]; !ok || g != string(gen) {
			f.last[string(uuid)], changed = string(gen), changed+1
		}
	}
}

// member finds key in b and returns its value up to end (spaces and a
// string's opening quote skipped), and the bytes after it; nil if none.
func member(b []byte, key string, end byte) ([]byte, []byte) {
	i := bytes.Index(b, []byte(key))
	if i < 0 {
		return nil, nil
	}
	b = bytes.TrimLeft(b[i+len(key):], ` "`)
	j := bytes.IndexByte(b, end)
	if k := bytes.IndexByte(b, '}'); end == ',' && k >= 0 && (j < 0 || k < j) {
		j = k
	}
	if j < 0 {
		return nil, nil
	}
	return b[:j], b[j:]
}
