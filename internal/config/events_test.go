package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func eventsConfig(t *testing.T, table string) (*Config, error) {
	t.Helper()
	dir := t.TempDir()
	plugin := filepath.Join(dir, "p.wasm")
	if err := os.WriteFile(plugin, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rabbit.pw"), []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return Parse("[engine]\nid = \"e1\"\n[placement]\nendpoint = \"http://127.0.0.1:1\"\n[plugin]\npath = \""+plugin+"\"\n"+table, dir)
}

func TestEventsTable(t *testing.T) {
	c, err := eventsConfig(t, "[events]\ntransport_url = \"rabbit://rpengine@127.0.0.1:5672/\"\npassword_file = \"rabbit.pw\"\n")
	if err != nil {
		t.Fatal(err)
	}
	e := c.Events
	if !e.Enabled() || e.URL() != "amqp://rpengine:s3cret@127.0.0.1:5672/" || e.Queue != "rpengine-e1" ||
		e.Topic != "ironic_versioned_notifications" || e.Exchange != "ironic" || e.FullInterval.D() != 10*time.Minute {
		t.Fatalf("events: %+v, url %q", e, e.URL())
	}
	if c, err := eventsConfig(t, ""); err != nil || c.Events.Enabled() {
		t.Fatalf("no [events]: enabled %v, %v", c.Events.Enabled(), err)
	}
	for table, want := range map[string]string{
		"transport_url = \"amqp://u:pw@h/\"":                        "holds a password",
		"transport_url = \"http://h/\"":                             "scheme \"http\"",
		"transport_url = \"amqp://u@h/\"\npassword_file = \"nope\"": "events.password_file",
		"transport_url = \"amqp://u@h/\"\nwindow = \"1m\"":          "events.window",
		"transport_url = \"amqp://u@h/\"\nfull_interval = \"-1s\"":  "events.full_interval",
		"transport_url = \"amqp://u@h/\"\nqueue_name = \"x\"":       "unknown key(s): events.queue_name",
	} {
		_, err := eventsConfig(t, "[events]\n"+table+"\n")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error naming %q", table, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "pw@") {
			t.Errorf("%q: the error quotes the password: %v", table, err)
		}
	}
}
