package config

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/events"
)

// Events is the [events] table: the message bus the source's
// notifications arrive on (docs/EVENTS.md). Without transport_url the
// engine runs full cycles only.
type Events struct {
	// TransportURL is amqp:// (or oslo's rabbit://) user@host:port/vhost,
	// without the password: that comes from PasswordFile.
	TransportURL string `toml:"transport_url"`
	PasswordFile string `toml:"password_file"`
	Exchange     string `toml:"exchange"`
	Topic        string `toml:"topic"`
	// Queue is this engine's own queue (default rpengine-<engine.id>).
	Queue    string   `toml:"queue"`
	Window   Duration `toml:"window"`
	MaxQueue int      `toml:"max_queue"`
	// FullInterval is the time between full cycles while the bus is
	// connected; engine.interval applies while it is not.
	FullInterval Duration `toml:"full_interval"`
	// ProbeInterval is the period of the probe for changes the bus does
	// not announce (the plugin's recent_nodes); 0 turns it off.
	ProbeInterval Duration `toml:"probe_interval"`
	// ProbeLimit is how many of the most recently changed nodes a probe
	// asks for.
	ProbeLimit int `toml:"probe_limit"`
	// NodeCooldown is the least time between two reads of one node for
	// its notifications (a change in flight sends several); 0 reads each
	// batch's nodes at once.
	NodeCooldown Duration `toml:"node_cooldown"`

	password string // read from PasswordFile at load
}

// Enabled says whether events are configured.
func (e Events) Enabled() bool { return e.TransportURL != "" }

// URL is the transport URL with the password, for the AMQP client only:
// never log it.
func (e Events) URL() string {
	u, err := url.Parse(amqpScheme(e.TransportURL))
	if err != nil || u.User == nil {
		return amqpScheme(e.TransportURL)
	}
	u.User = url.UserPassword(u.User.Username(), e.password)
	return u.String()
}

// Options are the event source's options.
func (e Events) Options() events.Options {
	return events.Options{URL: e.URL(), Exchange: e.Exchange, Topic: e.Topic, Queue: e.Queue,
		Window: e.Window.D(), MaxQueue: e.MaxQueue}
}

func amqpScheme(s string) string {
	if rest, ok := strings.CutPrefix(s, "rabbit://"); ok {
		return "amqp://" + rest
	}
	return s
}

func defaultEvents() Events {
	return Events{Exchange: events.DefaultExchange, Topic: events.DefaultTopic,
		Window: Duration(events.DefaultWindow), MaxQueue: events.DefaultMaxQueue, FullInterval: Duration(10 * time.Minute),
		ProbeInterval: Duration(15 * time.Second), ProbeLimit: 50, NodeCooldown: Duration(time.Second)}
}

// checkEvents validates [events] and reads the password file (relative
// paths are from the config file's directory).
func (c *Config) checkEvents(dir string) []error {
	e := &c.Events
	if !e.Enabled() {
		return nil
	}
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("events.%s: "+format, append([]any{key}, args...)...))
	}
	if e.Queue == "" {
		e.Queue = "rpengine-" + c.Engine.ID
	}
	u, err := url.Parse(amqpScheme(e.TransportURL))
	switch {
	case err != nil:
		bad("transport_url", "%v", errors.Unwrap(err))
	case u.Scheme != "amqp" && u.Scheme != "amqps":
		bad("transport_url", "scheme %q; want amqp://, amqps:// or rabbit://", u.Scheme)
	case u.Host == "":
		bad("transport_url", "no host")
	case u.User != nil && hasPassword(u):
		bad("transport_url", "holds a password; put it in events.password_file (mode 0600) instead")
	}
	if e.PasswordFile != "" {
		p := e.PasswordFile
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if b, err := os.ReadFile(p); err != nil {
			bad("password_file", "%v", err)
		} else if e.password = strings.TrimRight(string(b), "\r\n"); e.password == "" {
			bad("password_file", "%s is empty", p)
		}
		c.secretFiles = append(c.secretFiles, p) // warned about when others may read it
	}
	if e.Window < 0 || e.Window.D() > 10*time.Second {
		bad("window", "%s; want 0 to 10s", e.Window.D())
	}
	if e.MaxQueue < 1 {
		bad("max_queue", "must be at least 1")
	}
	if e.FullInterval <= 0 {
		bad("full_interval", "must be positive")
	}
	if p := e.ProbeInterval.D(); p < 0 || p > 0 && p < time.Second {
		bad("probe_interval", "%s; want 0 (off) or at least 1s", p)
	}
	if c := e.NodeCooldown.D(); c < 0 || c > time.Minute {
		bad("node_cooldown", "%s; want 0 (off) to 1m", c)
	}
	if e.ProbeLimit < 1 || e.ProbeLimit > hostabi.MaxRecentNodes {
		bad("probe_limit", "%d; want 1 to %d", e.ProbeLimit, hostabi.MaxRecentNodes)
	}
	return errs
}

func hasPassword(u *url.URL) bool { _, ok := u.User.Password(); return ok }
