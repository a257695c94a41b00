package vcenter

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// clusterPrefix is how vCenter names every cluster's managed object.
const clusterPrefix = "domain-c"

// ClusterUUID is the provider UUID of a cluster: stable for the life of
// the cluster, different in every vCenter, and reversible to the
// cluster's managed object reference, so that confirm_deleted can ask
// vCenter about a cluster the listing no longer shows (the plugin keeps
// nothing across instances). Layout (RFC 9562 version 8): bytes 0-9 a
// SHA-256 of the vCenter's instance UUID (version and variant bits set),
// bytes 10-15 the number N of the reference "domain-cN".
func ClusterUUID(vcenterUUID, moref string) (string, error) {
	n, err := clusterNumber(moref)
	if err != nil {
		return "", err
	}
	var b [16]byte
	h := vcenterHash(vcenterUUID)
	copy(b[:10], h[:10])
	b[6] = b[6]&0x0f | 0x80
	b[8] = b[8]&0x3f | 0x80
	var num [8]byte
	binary.BigEndian.PutUint64(num[:], n)
	copy(b[10:], num[2:])
	s := hex.EncodeToString(b[:])
	return s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:], nil
}

// ClusterRef reverses ClusterUUID: the cluster's reference value, or
// false for a UUID of another vCenter or not made by ClusterUUID.
func ClusterRef(vcenterUUID, id string) (string, bool) {
	raw, err := hex.DecodeString(strings.ReplaceAll(id, "-", ""))
	if err != nil || len(raw) != 16 || len(id) != 36 {
		return "", false
	}
	h := vcenterHash(vcenterUUID)
	h[6] = h[6]&0x0f | 0x80
	h[8] = h[8]&0x3f | 0x80
	if string(raw[:10]) != string(h[:10]) {
		return "", false
	}
	var num [8]byte
	copy(num[2:], raw[10:])
	return clusterPrefix + strconv.FormatUint(binary.BigEndian.Uint64(num[:]), 10), true
}

func vcenterHash(vcenterUUID string) [32]byte {
	return sha256.Sum256([]byte("rpengine-vmware-cluster:" + strings.ToLower(vcenterUUID)))
}

func clusterNumber(moref string) (uint64, error) {
	rest, ok := strings.CutPrefix(moref, clusterPrefix)
	n, err := strconv.ParseUint(rest, 10, 48)
	if !ok || err != nil || rest == "" || rest[0] == '+' {
		return 0, fmt.Errorf("reference %q is not %sN", moref, clusterPrefix)
	}
	return n, nil
}
