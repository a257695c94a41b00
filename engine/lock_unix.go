//go:build unix

package engine

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
)

// held are the state files this process has locked: a reload that loads
// the same file again must not lock itself out.
var held = struct {
	sync.Mutex
	files map[string]*os.File
}{files: map[string]*os.File{}}

// lockState takes an exclusive lock beside the state file for the life of
// the process. Two engines sharing one file would each overwrite the
// other's ownership record; the second is refused instead.
func lockState(path string) error {
	held.Lock()
	defer held.Unlock()
	if _, ok := held.files[path]; ok {
		return nil
	}
	f, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("state file lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("%w: %s is in use by another engine process; give each engine its own engine.state_file", ErrStateInUse, path)
		}
		return fmt.Errorf("state file lock %s.lock: %w", path, err)
	}
	held.files[path] = f
	return nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
