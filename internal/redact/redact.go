// Package redact keeps credentials out of what the engine shows: the
// status page, logs, reports, the state file and metrics.
package redact

import (
	"net/url"
	"strings"
)

// secretParams are query parameters whose values are credentials.
var secretParams = []string{"password", "passwd", "token", "secret", "auth", "key", "signature", "credential"}

// URL returns raw with any password in its userinfo and the value of any
// query parameter named like a credential replaced by "xxxxx". Text that
// does not parse as a URL with a scheme is returned cut at its first "@"
// after "//", which is where a credential would end.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		if i := strings.Index(raw, "//"); i >= 0 {
			if j := strings.LastIndex(raw[i:], "@"); j >= 0 {
				return raw[:i+2] + "xxxxx" + raw[i+j:]
			}
		}
		return raw
	}
	changed := false
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
		changed = true
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			if secretName(k) {
				q[k] = []string{"xxxxx"}
				changed = true
			}
		}
		if changed {
			u.RawQuery = q.Encode()
		}
	}
	if !changed {
		return raw
	}
	return u.String()
}

func secretName(k string) bool {
	k = strings.ToLower(k)
	for _, s := range secretParams {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

// Text returns s with every occurrence of each raw URL replaced by its
// redacted form: for messages that quote an endpoint, such as errors.
func Text(s string, raws ...string) string {
	for _, raw := range raws {
		if r := URL(raw); r != raw && raw != "" {
			s = strings.ReplaceAll(s, raw, r)
			// net/http quotes a URL with the password as "***".
			if u, err := url.Parse(raw); err == nil && u.User != nil {
				if p, ok := u.User.Password(); ok && len(p) >= 4 { // a shorter one would mangle the text
					s = strings.ReplaceAll(s, p, "xxxxx")
				}
			}
		}
	}
	return s
}
