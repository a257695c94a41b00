package vcsession

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/vcsimtest"
)

// retrieveRootName is a SOAP call that needs a session: the name of the
// root folder, through the PropertyCollector.
const retrieveRootName = `<?xml version="1.0" encoding="UTF-8"?>
<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><soapenv:Body>
<RetrievePropertiesEx xmlns="urn:vim25"><_this type="PropertyCollector">propertyCollector</_this><specSet>
<propSet><type>Folder</type><pathSet>name</pathSet></propSet><objectSet><obj type="Folder">group-d1</obj></objectSet>
</specSet><options></options></RetrievePropertiesEx></soapenv:Body></soapenv:Envelope>`

func call(t *testing.T, s *Session, url string) (*http.Request, int, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", url+SDKPath, strings.NewReader(retrieveRootName))
	req.Header.Set("Content-Type", "text/xml")
	req.Header.Set("SOAPAction", "urn:vim25/6.5")
	if err := s.Apply(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return req, resp.StatusCode, b
}

func TestSessionLogsInRenewsAndLogsOut(t *testing.T) {
	sim := vcsimtest.Start(t, vcsimtest.Model{Clusters: 1, Hosts: 1, Datastores: 1})
	s, err := New(sim.URL, vcsimtest.User, vcsimtest.Password, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, status, body := call(t, s, sim.URL)
	if status != 200 || !bytes.Contains(body, []byte("Datacenters")) || s.Logins() != 1 {
		t.Fatalf("first call: %d %s, %d logins", status, body, s.Logins())
	}
	// A restarted vCenter knows no session: NotAuthenticated, then one login.
	sim.Restart()
	req, status, body := call(t, s, sim.URL)
	if !s.Rejected(status, nil, body) {
		t.Fatalf("after a restart: %d %s not seen as NotAuthenticated", status, body)
	}
	if err := s.Renew(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if err := s.Renew(context.Background(), req); err != nil || s.Logins() != 2 {
		t.Fatalf("a second renewal for the same rejected request logged in again: %d logins, %v", s.Logins(), err)
	}
	if _, status, _ := call(t, s, sim.URL); status != 200 {
		t.Fatalf("after renewal: %d", status)
	}
	// Logout ends the session on vCenter's side.
	old := req.Clone(context.Background())
	s.mu.Lock()
	cookie := s.cookie
	s.mu.Unlock()
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	old.Header.Del("Cookie")
	old.AddCookie(cookie)
	old.Body = io.NopCloser(strings.NewReader(retrieveRootName))
	resp, err := http.DefaultClient.Do(old)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !s.Rejected(resp.StatusCode, nil, b) {
		t.Fatalf("the logged-out cookie still works: %d", resp.StatusCode)
	}
}

func TestWrongPasswordIsNamedWithoutThePassword(t *testing.T) {
	sim := vcsimtest.Start(t, vcsimtest.Model{Clusters: 1, Hosts: 1, Datastores: 1})
	s, _ := New(sim.URL, vcsimtest.User, "not-the-Password-42", nil)
	req, _ := http.NewRequest("POST", sim.URL+SDKPath, nil)
	err := s.Apply(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), "login as "+vcsimtest.User) || strings.Contains(err.Error(), "not-the-Password-42") {
		t.Fatalf("err = %v", err)
	}
	if _, err := New("vc.example.com", "u", "p", nil); err == nil {
		t.Fatal("an endpoint without scheme was accepted")
	}
}
