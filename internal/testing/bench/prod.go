package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// StartProd starts the production-shaped Placement (uWSGI with workers
// processes on a private MariaDB, scripts/placement-prod) on port.
func StartProd(root string, port, workers int) (*Child, error) {
	dir, err := os.MkdirTemp("", "rpbench-placement-prod")
	if err != nil {
		return nil, err
	}
	stopScript := filepath.Join(root, "scripts/placement-prod/stop.sh")
	cmd := exec.Command(filepath.Join(root, "scripts/placement-prod/start.sh"), dir, fmt.Sprint(port), fmt.Sprint(workers))
	cmd.Stderr = os.Stderr
	if out, err := cmd.Output(); err != nil {
		exec.Command(stopScript, dir).Run()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start production-shaped placement: %v: %s", err, out)
	}
	stop := func() {
		exec.Command(stopScript, dir).Run()
		os.RemoveAll(dir)
	}
	return started(&Child{URL: fmt.Sprintf("http://127.0.0.1:%d", port), stop: stop}), nil
}
