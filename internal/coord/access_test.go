package coord_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/coord"
	"github.com/rpengine/rpengine/internal/testing/etcdtest"
)

// Against an etcd secured as operators secure it (TLS with client
// certificates, users, a role on the engine's prefix alone): the right
// certificate and user register and divide; every wrong one is refused
// at once, named.
func TestSecuredEtcd(t *testing.T) {
	const prefix = "/secure/"
	s := etcdtest.StartSecure(t, prefix)
	right := coord.Access{CAFile: s.CA, CertFile: s.Cert, KeyFile: s.Key, User: s.User, Password: s.Password}
	ctx := context.Background()
	if err := coord.CheckAccess(ctx, []string{s.URL}, right, prefix); err != nil {
		t.Fatalf("the right access: %v", err)
	}
	c, err := coord.New(ctx, coord.Config{Endpoints: []string{s.URL}, Access: right, Prefix: prefix, Member: "a",
		OwnerTrait: "CUSTOM_RPENGINE_OWNER_A", TTL: 2 * time.Second, Division: coord.Division{Partitions: 4}})
	if err != nil {
		t.Fatalf("register: %v", err)
	}
	defer c.Close()
	if a := sync(t, c); len(a.Held) != 4 {
		t.Errorf("held %v, want the 4 partitions", a.Held)
	}
	st, err := coord.ReadStatus(ctx, []string{s.URL}, right, prefix, coord.Division{Partitions: 4}, 1)
	if err != nil || len(st.Claims) != 4 {
		t.Errorf("status: %+v, %v", st, err)
	}
	wrong := func(f func(a *coord.Access)) coord.Access { a := right; f(&a); return a }
	for _, tc := range []struct {
		name   string
		a      coord.Access
		prefix string
		want   []string
	}{
		{"another CA's certificate", wrong(func(a *coord.Access) { a.CertFile, a.KeyFile = s.OtherCert, s.OtherKey }), prefix,
			[]string{"refused the TLS connection", "client certificate " + s.OtherCert}},
		{"no certificate", wrong(func(a *coord.Access) { a.CertFile, a.KeyFile = "", "" }), prefix,
			[]string{"refused the TLS connection", "no client certificate"}},
		{"no CA", wrong(func(a *coord.Access) { a.CAFile = "" }), prefix, []string{"refused the TLS connection", "certificate"}},
		{"a wrong password", wrong(func(a *coord.Access) { a.Password = "nope" }), prefix, []string{`as user "rpengine"`, "authentication failed"}},
		{"a prefix outside the role", right, "/other/", []string{"reading /other/", "permission denied"}},
	} {
		err := coord.CheckAccess(ctx, []string{s.URL}, tc.a, tc.prefix)
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v; want it to say %q", tc.name, err, w)
			}
		}
		if err != nil && strings.Contains(err.Error(), s.Password) {
			t.Errorf("%s: the error shows the password: %v", tc.name, err)
		}
	}
}
