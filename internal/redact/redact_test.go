package redact

import (
	"strings"
	"testing"
)

func TestURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://admin:s3cret@placement:8778/":         "http://admin:xxxxx@placement:8778/",
		"https://h/x?token=abc&limit=5":               "https://h/x?limit=5&token=xxxxx",
		"http://placement:8778":                       "http://placement:8778",
		"http://user@h/":                              "http://user@h/",
		"placement:8778":                              "placement:8778",
		"http://adm:p@ss word@h/":                     "http://xxxxx@h/",
		"https://h/v3?X-Amz-Signature=1&os_password=": "https://h/v3?X-Amz-Signature=xxxxx&os_password=xxxxx",
	} {
		if got := URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestText(t *testing.T) {
	raw := "http://admin:s3cret@placement:8778/"
	msg := `GET http://admin:s3cret@placement:8778/resource_providers: Get "http://admin:***@placement:8778/": refused; s3cret`
	got := Text(msg, raw)
	if strings.Contains(got, "s3cret") || !strings.Contains(got, "http://admin:xxxxx@placement:8778/resource_providers") {
		t.Fatalf("%q", got)
	}
}

// A request's URL repeats the endpoint in pieces: its query token is
// hidden wherever it appears, escaped or not.
func TestTextHidesAQueryTokenInPieces(t *testing.T) {
	raw := "http://placement:8778/p?token=T0k/en+1"
	msg := `GET http://placement:8778/p/resource_providers?token=T0k%2Fen%2B1: refused; T0k/en+1`
	got := Text(msg, raw)
	if strings.Contains(got, "T0k") {
		t.Fatalf("%q", got)
	}
	if s := Secrets("http://u:pw@h/?auth_token=abcd&limit=5"); len(s) != 1 || s[0] != "abcd" {
		t.Errorf("Secrets: %q (the 2-byte password is too short to hide everywhere)", s)
	}
}
