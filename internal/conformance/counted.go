package conformance

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/rpengine/rpengine/internal/wasmhost"
)

// counted is o's HTTP client with each request counted against the
// granted service whose endpoint it falls under.
func counted(o wasmhost.Options, count func(service string)) *http.Client {
	next := http.DefaultTransport
	c := &http.Client{}
	if o.HTTPClient != nil {
		*c = *o.HTTPClient
		if c.Transport != nil {
			next = c.Transport
		}
	}
	ends := map[string]*url.URL{}
	for name, e := range o.Services {
		if u, err := url.Parse(e); err == nil {
			ends[name] = u
		}
	}
	c.Transport = counter{next, ends, count}
	return c
}

type counter struct {
	next  http.RoundTripper
	ends  map[string]*url.URL
	count func(string)
}

func (t counter) RoundTrip(r *http.Request) (*http.Response, error) {
	best, n := "", -1
	for name, u := range t.ends {
		prefix := strings.TrimSuffix(u.Path, "/")
		if u.Scheme == r.URL.Scheme && u.Host == r.URL.Host && strings.HasPrefix(r.URL.Path, prefix) && len(prefix) > n {
			best, n = name, len(prefix)
		}
	}
	if best != "" {
		t.count(best)
	}
	return t.next.RoundTrip(r)
}
