package ironic

import (
	"fmt"
	"strconv"
	"strings"
)

// version is an Ironic API microversion, 1.minor.
type version struct{ major, minor int }

// String is "major.minor" (strconv: a listing writes it twice a page,
// and fmt costs a Wasm guest several times more).
func (v version) String() string { return strconv.Itoa(v.major) + "." + strconv.Itoa(v.minor) }
func (v version) less(w version) bool {
	return v.major < w.major || v.major == w.major && v.minor < w.minor
}
func (v version) zero() bool { return v == version{} }

func parseVersion(s string) (version, error) {
	maj, min, ok := strings.Cut(strings.TrimSpace(s), ".")
	a, err1 := strconv.Atoi(maj)
	b, err2 := strconv.Atoi(min)
	if !ok || err1 != nil || err2 != nil || a < 1 || b < 0 {
		return version{}, fmt.Errorf("bad API version %q", s)
	}
	return version{a, b}, nil
}

// The versions this plugin relies on (Ironic's api-ref). It never asks for more than newest: a
// later version may change what a listing returns (1.83 hides child nodes).
var (
	newest        = version{1, 82} // shard field and ?shard= / ?sharded= filters
	needShard     = version{1, 82}
	needRetired   = version{1, 61}
	needGroup     = version{1, 46} // conductor_group field and filter
	oldestUsable  = version{1, 46} // also: fields= 1.8, resource_class 1.21, traits 1.37, fault 1.42
	versionHeader = "X-OpenStack-Ironic-API-Version"
	maxHeader     = "X-OpenStack-Ironic-API-Maximum-Version"
	minHeader     = "X-OpenStack-Ironic-API-Minimum-Version"
)

// pick chooses the version to speak given the server's range.
func pick(serverMin, serverMax version) (version, error) {
	v := newest
	if serverMax.less(v) {
		v = serverMax
	}
	if v.less(oldestUsable) {
		return v, fmt.Errorf("the Ironic API supports versions up to %s; this plugin needs at least %s", serverMax, oldestUsable)
	}
	if v.less(serverMin) {
		return v, fmt.Errorf("the Ironic API supports only versions %s to %s; this plugin speaks up to %s", serverMin, serverMax, newest)
	}
	return v, nil
}

// nodeFields are the node fields the engine needs, at version v: a field
// the server cannot return at v is left out (and stays empty).
func nodeFields(v version) []string {
	f := []string{"uuid", "name", "resource_class", "provision_state", "target_provision_state",
		"power_state", "maintenance", "instance_uuid", "conductor_group", "traits", "fault"}
	if !v.less(needRetired) {
		f = append(f, "retired")
	}
	if !v.less(needShard) {
		f = append(f, "shard")
	}
	return f
}
