package ops

import (
	"fmt"
	"os"
	"strings"

	"github.com/prometheus/exporter-toolkit/web"
	"go.yaml.in/yaml/v2"
)

// PlainHTTP is what the endpoint is without server.web_config_file.
const PlainHTTP = "plain HTTP, no authentication"

// WebSecurity says in plain words what a Prometheus web configuration
// file turns on, for the start log and `engine validate` ("" is no file:
// PlainHTTP). A file that turns on no TLS is refused: the toolkit would
// serve plain HTTP, with any basic-auth password in clear, while the
// config claims a secured endpoint.
func WebSecurity(path string) (string, error) {
	if path == "" {
		return PlainHTTP, nil
	}
	if err := web.Validate(path); err != nil {
		return "", fmt.Errorf("server.web_config_file %s: %w", path, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("server.web_config_file %s: %w", path, err)
	}
	var c web.Config
	if err := yaml.Unmarshal(b, &c); err != nil {
		return "", fmt.Errorf("server.web_config_file %s: %w", path, err)
	}
	t := c.TLSConfig
	if t.TLSCertPath == "" && t.TLSCert == "" {
		return "", fmt.Errorf("server.web_config_file %s: no tls_server_config certificate: the endpoint would be plain HTTP "+
			"(any basic-auth password sent in clear); give cert_file and key_file, or remove the key to serve plain HTTP on purpose", path)
	}
	on := []string{"TLS"}
	if t.ClientAuth == "RequireAndVerifyClientCert" {
		on = append(on, "client certificates required")
	}
	if len(c.Users) > 0 {
		on = append(on, fmt.Sprintf("basic auth (%d users)", len(c.Users)))
	}
	if len(on) == 1 {
		on = append(on, "no authentication")
	}
	return strings.Join(on, ", "), nil
}
