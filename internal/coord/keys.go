package coord

import (
	"strings"
	"time"
)

// The key layout under Config.Prefix:
//
//	members/<id>  this member's registration, bound to its lease
//	claims/<unit> the id of the member holding the unit, bound to its lease
//	seen/<id>     members that ever registered: whose owner marker may be
//	              taken over once they no longer hold a unit (no lease)
//	moves/<id>    the member's last acquisitions and releases (no lease)
//	placement     the identity of the Placement the record belongs to
//	record/<placement hash>/<uuid>
//	              one provider's ownership record (record.go; no lease)
type keys struct{ prefix string }

func newKeys(prefix string) keys {
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	return keys{prefix}
}

func (k keys) member(id string) string { return k.prefix + "members/" + id }
func (k keys) members() string         { return k.prefix + "members/" }
func (k keys) claim(unit string) string {
	return k.prefix + "claims/" + unit
}
func (k keys) claims() string        { return k.prefix + "claims/" }
func (k keys) seen(id string) string { return k.prefix + "seen/" + id }
func (k keys) seens() string         { return k.prefix + "seen/" }
func (k keys) move(id string) string { return k.prefix + "moves/" + id }
func (k keys) moves() string         { return k.prefix + "moves/" }
func (k keys) placement() string     { return k.prefix + "placement" }

// unitOf is the unit of a claim key.
func (k keys) unitOf(key string) string { return strings.TrimPrefix(key, k.claims()) }

// MemberInfo is the value of members/<id>.
type MemberInfo struct {
	ID       string    `json:"id"`
	Host     string    `json:"host"`
	PID      int       `json:"pid"`
	Started  time.Time `json:"started"`
	Division string    `json:"division"`
	// Lease is the lease id in hex, for etcdctl.
	Lease string `json:"lease"`
}

// Seen is the value of seen/<id>.
type Seen struct {
	OwnerTrait string `json:"owner_trait"`
	Division   string `json:"division"`
}

// Move is one acquisition or release of a unit, as recorded in moves/<id>.
type Move struct {
	At     time.Time `json:"at"`
	Member string    `json:"member"`
	Unit   string    `json:"unit"`
	Action string    `json:"action"`         // "acquired" or "released"
	From   string    `json:"from,omitempty"` // the previous holder, when known
}
