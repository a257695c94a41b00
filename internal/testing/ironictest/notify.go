package ironictest

import (
	"errors"
	"strings"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/testenv"
)

// StartRealNotifying is StartReal with Ironic's versioned notifications
// on: `[DEFAULT] notification_level = info` and
// `[oslo_messaging_notifications] driver = messagingv2` with transportURL
// (a RabbitMQ, e.g. internal/testing/rabbittest). Ironic then publishes to
// the exchange "ironic", topic ironic_versioned_notifications, for every
// node change. The RPC transport stays "none" (all-in-one Ironic).
// `retry = 0`: oslo's default (-1) retries a notification forever, which
// would hang Ironic's API calls while a test has the bus stopped.
func StartRealNotifying(t testing.TB, transportURL string) string {
	t.Helper()
	if transportURL == "" {
		t.Fatal("StartRealNotifying: no transport URL")
	}
	if testing.Short() {
		t.Skip("-short: not using a real Ironic")
	}
	requireInstalled(t)
	tmpl, err := template()
	if err != nil {
		t.Fatalf("ironic schema template: %v", err)
	}
	dir := scratchDir(t)
	var p *testenv.Service
	for range 3 {
		if p, err = launch(dir, tmpl, transportURL); !errors.Is(err, testenv.ErrExited) {
			break
		}
	}
	if err != nil {
		t.Fatalf("start ironic: %v", err)
	}
	t.Cleanup(p.Stop)
	return p.URL
}

// notifying returns the config rewrite that turns notifications on
// (nil-safe: "" leaves the config as it is).
func notifying(transportURL string) func(string) string {
	return func(conf string) string {
		if transportURL == "" {
			return conf
		}
		conf = strings.Replace(conf, "[DEFAULT]\n", "[DEFAULT]\nnotification_level = info\n", 1)
		return conf + "\n[oslo_messaging_notifications]\ndriver = messagingv2\nretry = 0\ntransport_url = " +
			strings.Replace(transportURL, "amqp://", "rabbit://", 1) + "\n"
	}
}
