package config

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/rpengine/rpengine/internal/redact"
)

// Coord is [coord]: several engines dividing one fleet through etcd. See
// docs/SCALEOUT.md.
type Coord struct {
	// Etcd lists etcd's client URLs; none means no coordination.
	Etcd []string `toml:"etcd"`
	// Prefix holds the keys of one fleet's engines.
	Prefix string `toml:"prefix"`
	// Partitions > 0: live engines divide nodes by a hash of their uuid.
	Partitions int `toml:"partitions"`
	// Shards: live engines divide these Ironic shards instead.
	Shards   []string `toml:"shards"`
	LeaseTTL Duration `toml:"lease_ttl"`
	// Backend is "etcd" (Etcd's URLs) or "kubernetes" (Leases and
	// ConfigMaps in Namespace, reached through Kubeconfig or, when that
	// is empty, the pod's service account).
	Backend    string `toml:"backend"`
	Namespace  string `toml:"namespace"`
	Kubeconfig string `toml:"kubeconfig"`
	// CAFile, CertFile and KeyFile are PEM files: the CA that signed
	// etcd's server certificate, and this engine's client certificate
	// and key (etcd's --client-cert-auth). User and PasswordFile log in
	// as an etcd user (coordsecret.go).
	CAFile       string `toml:"ca_file"`
	CertFile     string `toml:"cert_file"`
	KeyFile      string `toml:"key_file"`
	User         string `toml:"user"`
	PasswordFile string `toml:"password_file"`
	password     string // read from PasswordFile at load
}

// Coordination backends.
const (
	BackendEtcd       = "etcd"
	BackendKubernetes = "kubernetes"
)

// Enabled says whether engines share the fleet: etcd URLs are given, or
// the backend is Kubernetes.
func (k Coord) Enabled() bool { return len(k.Etcd) > 0 || k.Backend == BackendKubernetes }

// maxPartitions bounds the claims in etcd and the scope checks per node.
const maxPartitions = 4096

func defaultCoord() Coord {
	return Coord{Prefix: "/rpengine/", LeaseTTL: Duration(10 * time.Second), Backend: BackendEtcd}
}

func (c *Config) checkCoord() []error {
	k := c.Coord
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("coord.%s: "+format, append([]any{key}, args...)...))
	}
	for _, e := range k.Etcd {
		u, err := url.Parse(e)
		switch {
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			bad("etcd", "%q is not an http(s)://host:port URL", redact.URL(e))
		case u.User != nil:
			bad("etcd", "%q holds credentials, which etcd's client ignores: give coord.user and coord.password_file", redact.URL(e))
		}
	}
	errs = append(errs, c.checkCoordAccess()...)
	dynamic := k.Partitions != 0 || len(k.Shards) > 0
	switch {
	case dynamic && !k.Enabled():
		bad("etcd", "is required with coord.partitions or coord.shards (or coord.backend = \"kubernetes\")")
	case k.Partitions < 0 || k.Partitions > maxPartitions:
		bad("partitions", "must be in 0..%d", maxPartitions)
	case k.Partitions > 0 && len(k.Shards) > 0:
		bad("shards", "and coord.partitions exclude each other: divide by one")
	case len(k.Shards) > 0 && len(c.Scope.Shards) > 0:
		bad("shards", "replaces scope.shards: engines divide coord.shards among themselves")
	}
	errs = append(errs, k.checkBackend()...)
	if !strings.HasPrefix(k.Prefix, "/") {
		bad("prefix", "must start with /")
	}
	if d := k.LeaseTTL.D(); d < time.Second || d%time.Second != 0 {
		bad("lease_ttl", "must be whole seconds, at least 1s (etcd counts leases in seconds)")
	}
	return errs
}

// checkBackend checks coord.backend and the keys only one backend reads.
func (k Coord) checkBackend() []error {
	switch k.Backend {
	case BackendEtcd:
		if k.Namespace != "" || k.Kubeconfig != "" {
			return []error{errors.New(`coord.namespace and coord.kubeconfig need coord.backend = "kubernetes"`)}
		}
	case BackendKubernetes:
		if len(k.Etcd) > 0 {
			return []error{errors.New(`coord.etcd: unused with coord.backend = "kubernetes": remove one`)}
		}
		if k.Namespace != "" && !dnsLabel.MatchString(k.Namespace) {
			return []error{fmt.Errorf("coord.namespace: %q is not a Kubernetes namespace name (lowercase letters, digits, '-', at most 63)", k.Namespace)}
		}
	default:
		return []error{fmt.Errorf("coord.backend: %q is neither \"etcd\" nor \"kubernetes\"", k.Backend)}
	}
	return nil
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
