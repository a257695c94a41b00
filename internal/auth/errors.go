package auth

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
)

// explain turns a failed login into a message naming the likely cause
// and the key to check. It never includes a secret: only Keystone's
// status and its own message, bounded.
func explain(where string, err error) error {
	var ue gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &ue) {
		msg := keystoneMessage(ue.Body)
		switch ue.Actual {
		case 401:
			return fmt.Errorf("keystone at %s: credentials refused (401): check the user or application credential, its password or secret, its domain, and the project and its domain%s", where, msg)
		case 403:
			return fmt.Errorf("keystone at %s: login forbidden (403): the user may be disabled or lack a role on the project%s", where, msg)
		case 404:
			return fmt.Errorf("keystone at %s: not found (404): check auth.auth_url (it usually ends in /v3) and the project or domain names%s", where, msg)
		}
		if ue.Actual >= 500 {
			return fmt.Errorf("keystone at %s failed (%d), try again later%s", where, ue.Actual, msg)
		}
		return fmt.Errorf("keystone at %s answered %d%s", where, ue.Actual, msg)
	}
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var recordHdr tls.RecordHeaderError
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var ne net.Error
	switch {
	case errors.As(err, &unknownCA):
		return fmt.Errorf("keystone at %s: TLS certificate signed by an unknown authority: set auth.cacert to the CA bundle", where)
	case errors.As(err, &hostname):
		return fmt.Errorf("keystone at %s: TLS certificate is not valid for this host (%v): check auth.auth_url", where, hostname.Error())
	case errors.As(err, &invalid):
		return fmt.Errorf("keystone at %s: TLS certificate invalid (%v)", where, invalid.Error())
	case errors.As(err, &recordHdr) || strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return fmt.Errorf("keystone at %s does not speak TLS: use http:// in auth.auth_url, or check the port", where)
	case errors.As(err, &dnsErr):
		return fmt.Errorf("keystone at %s unreachable: host %q not found (DNS)", where, dnsErr.Name)
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("keystone at %s did not answer in time (auth.timeout)", where)
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return fmt.Errorf("keystone at %s unreachable: %v", where, opErr.Err)
	}
	return fmt.Errorf("keystone at %s: %w", where, err)
}

// keystoneMessage is Keystone's {"error": {"message": ...}}, as
// "; keystone says: ...".
func keystoneMessage(body []byte) string {
	var doc struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &doc) != nil || doc.Error.Message == "" {
		return ""
	}
	m := strings.Join(strings.Fields(doc.Error.Message), " ")
	if len(m) > 200 {
		m = m[:200] + "..."
	}
	return "; keystone says: " + m
}
