package ironictest

import (
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/rpengine/rpengine/internal/testing/testenv"
)

// databases maps a started Ironic's URL to its sqlite database.
var databases sync.Map

// ConductorMaintenance does in Ironic's database what the conductor does
// after failed power syncs (conductor/manager.py,
// handle_sync_power_state_max_retries_exceeded): maintenance on, fault
// "power failure", and updated_at moved as the ORM moves it on every
// UPDATE, with no notification.
func ConductorMaintenance(t testing.TB, url, uuid string) {
	t.Helper()
	const script = `import sqlite3, sys, datetime
c = sqlite3.connect(sys.argv[1], timeout=10)
now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")
n = c.execute("UPDATE nodes SET maintenance = 1, fault = 'power failure', maintenance_reason = 'During sync_power_state, max retries exceeded', updated_at = ? WHERE uuid = ?", (now, sys.argv[2])).rowcount
c.commit()
sys.exit(0 if n == 1 else 3)`
	inDatabase(t, url, "set maintenance", script, "", uuid)
}

// MarkAvailable does in Ironic's database what manage, provide (automated
// cleaning off) and power on leave on enrolled nodes: available, powered
// on, nothing pending. It spares a fleet-sized test thousands of
// conductor round trips; every later change goes through the API.
func MarkAvailable(t testing.TB, url string, uuids []string) {
	t.Helper()
	const script = `import sqlite3, sys, datetime
c = sqlite3.connect(sys.argv[1], timeout=30)
now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")
ids = sys.stdin.read().split()
n = c.executemany("UPDATE nodes SET provision_state = 'available', target_provision_state = NULL, power_state = 'power on', target_power_state = NULL, provision_updated_at = ?, updated_at = ? WHERE uuid = ?", [(now, now, u) for u in ids]).rowcount
c.commit()
sys.exit(0 if n == len(ids) else 3)`
	inDatabase(t, url, fmt.Sprintf("mark %d nodes available", len(uuids)), script, strings.Join(uuids, "\n"))
}

// inDatabase runs script (Python) on the database of the Ironic at url,
// with its path as the first argument, then args, and stdin.
func inDatabase(t testing.TB, url, what, script, stdin string, args ...string) {
	t.Helper()
	db, ok := databases.Load(url)
	if !ok {
		t.Fatalf("no database known for the Ironic at %s", url)
	}
	cmd := exec.Command(python, append([]string{"-c", script, db.(string)}, args...)...)
	cmd.Env = testenv.PythonEnv()
	cmd.Stdin = strings.NewReader(stdin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s in Ironic's database: %v: %s", what, err, out)
	}
}
