package logformat

import (
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// File is a log file that logrotate can move away: Reopen (on SIGHUP,
// once Watch runs) opens the path again, so records go to the new file
// and none is lost in between.
type File struct {
	mu   sync.Mutex
	path string
	f    *os.File
}

// OpenFile opens path for appending (created 0640 if missing).
func OpenFile(path string) (*File, error) {
	f := &File{path: path}
	if err := f.Reopen(); err != nil {
		return nil, err
	}
	return f, nil
}

// Write appends p to the file as it is now.
func (f *File) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.f.Write(p)
}

// Reopen opens the path again and closes the file written so far; on
// failure the old file stays in use.
func (f *File) Reopen() error {
	nf, err := os.OpenFile(f.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return fmt.Errorf("log.file: %w", err)
	}
	f.mu.Lock()
	old := f.f
	f.f = nf
	f.mu.Unlock()
	if old != nil {
		return old.Close()
	}
	return nil
}

// Watch reopens the file at each SIGHUP (logrotate's postrotate) until
// stop is closed; a failed reopen is written to the old file.
func (f *File) Watch(stop <-chan struct{}) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		defer signal.Stop(hup)
		for {
			select {
			case <-stop:
				return
			case <-hup:
				if err := f.Reopen(); err != nil {
					fmt.Fprintf(f, "log file not reopened: %v\n", err)
				}
			}
		}
	}()
}
