package coord

import (
	"crypto/sha256"
	"fmt"
	"strings"
)

// Labels and annotations of the Kubernetes backend's objects.
const (
	labelFleet      = "rpengine.io/fleet"
	labelRole       = "rpengine.io/role" // member, claim, record, placement
	labelPlacement  = "rpengine.io/placement"
	annotationID    = "rpengine.io/id" // the member id or the unit, unsanitised
	annotationInfo  = "rpengine.io/member"
	annotationSeen  = "rpengine.io/seen"
	roleMember      = "member"
	roleClaim       = "claim"
	roleRecord      = "record"
	rolePlacement   = "placement"
	managedByLabel  = "app.kubernetes.io/managed-by"
	managedByEngine = "rpengine"
)

// kubeNames names one fleet's objects in its namespace. Kubernetes names
// allow lowercase letters, digits and '-', so ids and units are folded
// into that and suffixed with a hash of the original, which keeps
// "rack-a" and "rack_a" apart.
type kubeNames struct {
	fleet string // label value and name prefix, from coord.prefix
}

func newKubeNames(prefix string) kubeNames {
	p := strings.Trim(prefix, "/")
	return kubeNames{fleet: fold(p, 30) + "-" + short(prefix)}
}

func (n kubeNames) member(id string) string { return n.fleet + "-m-" + fold(id, 60) + "-" + short(id) }
func (n kubeNames) claim(unit string) string {
	return n.fleet + "-c-" + fold(unit, 60) + "-" + short(unit)
}
func (n kubeNames) placement() string { return n.fleet + "-placement" }
func (n kubeNames) record(placement string, bucket int) string {
	return fmt.Sprintf("%s-r-%s-%02d", n.fleet, short(placement), bucket)
}

// selector selects the fleet's objects of one role.
func (n kubeNames) selector(role string) string {
	s := labelFleet + "=" + n.fleet
	if role != "" {
		s += "," + labelRole + "=" + role
	}
	return s
}

func (n kubeNames) labels(role string) map[string]string {
	return map[string]string{labelFleet: n.fleet, labelRole: role, managedByLabel: managedByEngine}
}

// fold maps s to lowercase letters, digits and '-', at most n long.
func fold(s string, n int) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > n {
		out = strings.Trim(out[:n], "-")
	}
	if out == "" {
		out = "x"
	}
	return out
}

func short(s string) string {
	sum := sha256.Sum256([]byte(s))
	return fmt.Sprintf("%x", sum[:4])
}
