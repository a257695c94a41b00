package redact

import (
	"encoding/json"
	"log/slog"
)

// Endpoint is a URL that may hold a credential, kept from the moment the
// config is read so that no print of it shows one: String (so %v, %s and
// %q), %#v, JSON, text and slog all give the redacted form. Raw is for
// the client that sends the request, alone.
type Endpoint struct{ raw string }

// NewEndpoint keeps raw.
func NewEndpoint(raw string) Endpoint { return Endpoint{raw} }

// Raw is the URL with its credentials: give it to an HTTP client only.
func (e Endpoint) Raw() string { return e.raw }

// IsZero reports an endpoint not given.
func (e Endpoint) IsZero() bool { return e.raw == "" }

// String is the URL with every credential shown as xxxxx.
func (e Endpoint) String() string { return URL(e.raw) }

// GoString is String, for %#v.
func (e Endpoint) GoString() string { return `redact.Endpoint("` + e.String() + `")` }

// LogValue is String, for slog.
func (e Endpoint) LogValue() slog.Value { return slog.StringValue(e.String()) }

// MarshalText is String: an encoded config shows no credential.
func (e Endpoint) MarshalText() ([]byte, error) { return []byte(e.String()), nil }

// MarshalJSON is String, as a JSON string.
func (e Endpoint) MarshalJSON() ([]byte, error) { return json.Marshal(e.String()) }

// UnmarshalText keeps the text as given: how TOML fills an Endpoint.
func (e *Endpoint) UnmarshalText(b []byte) error {
	e.raw = string(b)
	return nil
}
