package daemon

import (
	"bytes"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/ops"
)

// The watchdog pats systemd while the loop is live and stops once it is
// not, saying so once; NOTIFY_SOCKET is a socket of the test's.
func TestWatchdogPatsOnlyWhileLive(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	t.Setenv("NOTIFY_SOCKET", sock)
	var mu sync.Mutex
	at := time.Unix(1_000, 0)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return at }
	o := ops.New(now)
	o.Configure(ops.Info{Interval: time.Minute, UnhealthyAfter: 3, History: 5})
	var logs bytes.Buffer
	l := &Loop{Ops: o, Log: slog.New(slog.NewTextHandler(&logs, nil))}
	read := func() string {
		conn.SetReadDeadline(time.Now().Add(2 * time.Second))
		b := make([]byte, 256)
		n, err := conn.Read(b)
		if err != nil {
			return ""
		}
		return string(b[:n])
	}

	o.CycleStarted()
	o.CycleDone(engine.Report{}, now())
	if !l.pat(true) || read() != "WATCHDOG=1" {
		t.Fatal("live loop: no keep-alive")
	}
	mu.Lock()
	at = at.Add(5 * time.Minute) // nothing for more than 3+1 intervals
	mu.Unlock()
	if l.pat(true) || l.pat(false) {
		t.Fatal("idle loop said live")
	}
	conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if n, _ := conn.Read(make([]byte, 64)); n > 0 {
		t.Fatal("a keep-alive sent while not live")
	}
	if c := strings.Count(logs.String(), "the loop is not live"); c != 1 {
		t.Fatalf("%d error lines:\n%s", c, logs.String())
	}
	o.CycleStarted()
	if !l.pat(false) || read() != "WATCHDOG=1" || !strings.Contains(logs.String(), "live again") {
		t.Fatalf("loop back: %s", logs.String())
	}
}
