package placement

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// An endpoint's query token goes after the request's path, not before
// it, and no error quotes it: Go's client repeats the request URL in its
// errors, which the engine wraps.
func TestEndpointQueryTokenKeepsThePathAndStaysHidden(t *testing.T) {
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path+"?"+r.URL.RawQuery)
		if r.URL.Path == "/p/" {
			w.Write([]byte(`{"versions":[{"id":"v1.0","max_version":"1.39"}]}`))
			return
		}
		w.Write([]byte(`{"resource_providers":[]}`))
	}))
	defer srv.Close()
	const secret = "QueryT0kenS3cret"
	c, err := New(context.Background(), Config{Endpoint: srv.URL + "/p?token=" + secret, Token: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListProviders(context.Background(), url.Values{"in_tree": {"x"}}); err != nil {
		t.Fatal(err)
	}
	if want := "/p/resource_providers?in_tree=x&token=" + secret; len(paths) != 2 || paths[1] != want {
		t.Fatalf("requests %q, want the second %q", paths, want)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := ln.Addr().String()
	ln.Close()
	_, err = New(context.Background(), Config{Endpoint: "http://u:UserInfoS3cret@" + dead + "/p?auth_token=" + secret, Token: "admin",
		Retry: Retry{Attempts: 1}})
	if err == nil {
		t.Fatal("a dead endpoint answered")
	}
	if s := err.Error(); strings.Contains(s, secret) || strings.Contains(s, "UserInfoS3cret") || !strings.Contains(s, dead+"/p/?auth_token=xxxxx") {
		t.Errorf("the error: %s", s)
	}
}
