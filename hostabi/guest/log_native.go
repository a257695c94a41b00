//go:build !wasip1

package guest

import (
	"fmt"
	"os"
	"sync"
)

var (
	testLogMu sync.Mutex
	testLog   func(level int32, msg string)
)

// Log writes a message to the engine's log, tagged with the plugin's name.
// In native builds it goes to the function given to SetLogForTest, else
// to stderr.
func Log(level int32, msg string) {
	testLogMu.Lock()
	fn := testLog
	testLogMu.Unlock()
	if fn == nil {
		fmt.Fprintf(os.Stderr, "plugin log level=%d: %s\n", level, msg)
		return
	}
	fn(level, msg)
}

// SetLogForTest makes Log call fn in native (non-wasip1) builds; nil
// restores the default (stderr). In wasip1 builds it does nothing.
func SetLogForTest(fn func(level int32, msg string)) {
	testLogMu.Lock()
	defer testLogMu.Unlock()
	testLog = fn
}
