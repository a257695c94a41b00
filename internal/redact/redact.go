package redact

import (
	"net/url"
	"slices"
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
// redacted form, and then every credential in it (a password, a secret
// query value) wherever it still appears: for messages that quote an
// endpoint, such as errors, which may repeat it in pieces (a request's
// URL is the endpoint's path, then the request's, then its query).
func Text(s string, raws ...string) string {
	for _, raw := range raws {
		if r := URL(raw); r != raw && raw != "" {
			s = strings.ReplaceAll(s, raw, r)
		}
		for _, v := range Secrets(raw) {
			s = strings.ReplaceAll(s, v, "xxxxx")
			if q := url.QueryEscape(v); q != v {
				s = strings.ReplaceAll(s, q, "xxxxx")
			}
		}
	}
	return s
}

// minSecret is the shortest credential Text hides wherever it appears: a
// shorter one would mangle the text around it.
const minSecret = 4

// Secrets lists the credentials raw holds: the password of its userinfo
// and the values of query parameters named like a credential, each at
// least minSecret bytes long.
func Secrets(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	var out []string
	if p, ok := u.User.Password(); ok && len(p) >= minSecret {
		out = append(out, p)
	}
	for _, kv := range strings.Split(u.RawQuery, "&") {
		k, v, _ := strings.Cut(kv, "=")
		if k, err := url.QueryUnescape(k); err != nil || !secretName(k) {
			continue
		}
		// The value as written, and as a client decodes it.
		forms := []string{v}
		if q, err := url.QueryUnescape(v); err == nil {
			forms = append(forms, q)
		}
		if p, err := url.PathUnescape(v); err == nil {
			forms = append(forms, p)
		}
		for _, f := range forms {
			if len(f) >= minSecret && !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}
