package ironictest

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpengine/rpengine/internal/testing/testenv"
)

const (
	// EnvRequire set to "1" turns "Ironic is not installed" from a skip
	// into a failure, for CI jobs that must run the end-to-end tests.
	EnvRequire = testenv.EnvRequire

	// python is Debian's interpreter: the one on PATH may be a pyenv shim
	// that cannot import python3-ironic.
	python = "/usr/bin/python3"

	readyTimeout = 90 * time.Second
	singleMain   = "import sys; from ironic.cmd.singleprocess import main; sys.exit(main())"
	dbsyncMain   = "import sys; from ironic.cmd.dbsync import main; sys.exit(main())"
)

// StartReal starts a real Ironic for this test alone, on a free port of
// 127.0.0.1 with an empty database, and returns its base URL (no /v1).
// It is killed when the test ends.
func StartReal(t testing.TB) string {
	t.Helper()
	p, _ := startAPI(t, func() []func(string) string { return nil })
	return p.URL
}

// startAPI starts the all-in-one Ironic in a scratch directory, which it
// returns too; rewrites gives each try's config rewrites (a port it
// picks). It is stopped when the test ends.
func startAPI(t testing.TB, rewrites func() []func(string) string) (*testenv.Service, string) {
	t.Helper()
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
	for range 3 { // another process may take a free port before Ironic binds it
		if p, err = launch(dir, tmpl, "", rewrites()...); !errors.Is(err, testenv.ErrExited) {
			break
		}
	}
	if err != nil {
		t.Fatalf("start ironic: %v", err)
	}
	t.Cleanup(p.Stop)
	return p, dir
}

// scratchDir is the test's directory for the config, the database and the
// log: on /dev/shm when there is one (sqlite writes there are about 1.5x
// faster than on disk).
func scratchDir(t testing.TB) string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if dir, err := os.MkdirTemp("/dev/shm", "ironictest-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	return t.TempDir()
}

var installed struct {
	once sync.Once
	why  string // empty when Ironic can be started
	pkg  string // directory of the ironic package
}

// requireInstalled skips (or, with RPENGINE_REQUIRE_E2E=1, fails) the test
// when Ironic or the repository's config template is missing.
func requireInstalled(t testing.TB) {
	t.Helper()
	installed.once.Do(func() {
		if _, err := confTemplate(); err != nil {
			installed.why = err.Error()
			return
		}
		out, err := exec.Command(python, "-c", "import ironic, os; print(os.path.dirname(ironic.__file__))").CombinedOutput()
		if err != nil {
			installed.why = fmt.Sprintf("real Ironic not installed (%s -c 'import ironic': %v: %s); run scripts/ironic/install.sh",
				python, err, strings.TrimSpace(string(out)))
			return
		}
		installed.pkg = strings.TrimSpace(string(out))
	})
	if installed.why != "" {
		testenv.Unavailable(t, installed.why)
	}
}

// confTemplate finds scripts/ironic/ironic.conf.in, the one config the
// scripts and the tests share.
func confTemplate() (string, error) { return testenv.RepoFile("scripts/ironic/ironic.conf.in") }

// writeConf writes dir/ironic.conf for port and database db; extra, if
// set, rewrites the text (notify.go adds the notification options).
func writeConf(dir string, port int, db string, extra ...func(string) string) (string, error) {
	src, err := confTemplate()
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(src)
	if err != nil {
		return "", err
	}
	conf := strings.NewReplacer("@DIR@", dir, "@PORT@", strconv.Itoa(port), "@DB@", db).Replace(string(b))
	for _, f := range extra {
		conf = f(conf)
	}
	if err := os.MkdirAll(filepath.Join(dir, "lock"), 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "ironic.conf")
	return path, os.WriteFile(path, []byte(conf), 0o600)
}

var tmpl struct {
	mu   sync.Mutex
	path string
}

// template returns a database file with the schema built, creating it once
// per machine (and again when python3-ironic changes): create_schema costs
// about 7 s, a copy a few milliseconds.
func template() (string, error) {
	tmpl.mu.Lock()
	defer tmpl.mu.Unlock()
	if tmpl.path != "" {
		return tmpl.path, nil
	}
	key, err := schemaKey()
	if err != nil {
		return "", err
	}
	cache := filepath.Join(os.TempDir(), "rpengine-ironictest")
	path := filepath.Join(cache, "schema-"+key+".sqlite")
	if _, err := os.Stat(path); err == nil {
		tmpl.path = path
		return path, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp(cache, "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	db := filepath.Join(dir, "schema.sqlite")
	conf, err := writeConf(dir, 6385, db)
	if err != nil {
		return "", err
	}
	cmd := exec.Command(python, "-c", dbsyncMain, "--config-file", conf, "create_schema")
	cmd.Env = testenv.PythonEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("create_schema: %v\n%s", err, out)
	}
	// Rename is atomic: a concurrent test process sees the whole file or none.
	if err := os.Rename(db, path); err != nil {
		return "", err
	}
	tmpl.path = path
	return path, nil
}

// schemaKey changes when the installed Ironic's models or migrations do.
func schemaKey() (string, error) {
	var parts []string
	for _, rel := range []string{"db/sqlalchemy/models.py", "db/sqlalchemy/alembic/versions"} {
		st, err := os.Stat(filepath.Join(installed.pkg, rel))
		if err != nil {
			return "", err
		}
		parts = append(parts, strconv.FormatInt(st.ModTime().UnixNano(), 36), strconv.FormatInt(st.Size(), 36))
	}
	return strings.Join(parts, "-"), nil
}

func launch(dir, tmpl, notifyURL string, rewrite ...func(string) string) (*testenv.Service, error) {
	port, err := testenv.FreePort()
	if err != nil {
		return nil, err
	}
	db := filepath.Join(dir, "ironic-"+strconv.Itoa(port)+".sqlite")
	if err := copyFile(tmpl, db); err != nil {
		return nil, err
	}
	databases.Store("http://127.0.0.1:"+strconv.Itoa(port), db)
	conf, err := writeConf(dir, port, db, append([]func(string) string{notifying(notifyURL)}, rewrite...)...)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(python, "-c", singleMain, "--config-file", conf)
	cmd.Env = testenv.PythonEnv()
	// Ready when GET /v1/nodes answers: that needs the database, not just
	// the socket. Stop kills at once: the database is thrown away, so the
	// 2.5 s of a clean conductor shutdown buy nothing.
	ready := func(hc *http.Client, url string) bool { return testenv.GetOK(hc, url+"/v1/nodes") }
	return testenv.Launch(cmd, filepath.Join(dir, "ironic-"+strconv.Itoa(port)+".log"),
		"http://127.0.0.1:"+strconv.Itoa(port), ready, readyTimeout, 0)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
