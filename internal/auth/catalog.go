package auth

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
)

// CatalogRef is how a [plugin.services] entry names a catalog service
// instead of a URL: "catalog" (the service type is the entry's name) or
// "catalog:<type>".
const CatalogRef = "catalog"

// CatalogType says whether a [plugin.services] value refers to the
// catalog, and which service type it names.
func CatalogType(name, value string) (string, bool) {
	if value == CatalogRef {
		return name, true
	}
	if t, ok := strings.CutPrefix(value, CatalogRef+":"); ok {
		return t, true
	}
	return "", false
}

// Endpoint finds the endpoint of a service type in the token's catalog,
// on the configured interface and region.
func (s *Session) Endpoint(serviceType string) (string, error) {
	if s.pc == nil {
		return "", fmt.Errorf("service %q: the catalog needs Keystone auth (auth.method is noauth)", serviceType)
	}
	var catalog *tokens.ServiceCatalog
	var err error
	switch r := s.pc.GetAuthResult().(type) {
	case tokens.CreateResult:
		catalog, err = r.ExtractServiceCatalog()
	case tokens.GetResult:
		catalog, err = r.ExtractServiceCatalog()
	default:
		err = errors.New("no v3 token")
	}
	if err != nil {
		return "", fmt.Errorf("service catalog: %w", err)
	}
	eo := s.eo
	eo.Type = serviceType
	//lint:ignore SA1019 its replacement V3Endpoint may probe each endpoint over the network for a version; we ask for none and want the catalog's answer without a request
	url, err := openstack.V3EndpointURL(catalog, eo)
	if err != nil {
		var nf *gophercloud.ErrEndpointNotFound
		if errors.As(err, &nf) {
			return "", fmt.Errorf("service catalog lists no %q endpoint on interface %s%s", serviceType, eo.Availability, region(eo.Region))
		}
		return "", err
	}
	return url, nil
}

// Services resolves [plugin.services]: URLs are kept, catalog references
// are looked up.
func (s *Session) Services(in map[string]string) (map[string]string, error) {
	out := make(map[string]string, len(in))
	for name, v := range in {
		t, ok := CatalogType(name, v)
		if !ok {
			out[name] = v
			continue
		}
		url, err := s.Endpoint(t)
		if err != nil {
			return nil, fmt.Errorf("plugin.services.%s: %w", name, err)
		}
		out[name] = url
	}
	return out, nil
}

func region(r string) string {
	if r == "" {
		return ""
	}
	return ", region " + r
}
