//go:build wasip1

package guest

//go:wasmimport rpengine log
func hostLog(level int32, msg string)

// Log writes a message to the engine's log, tagged with the plugin's name.
// Levels are hostabi.LevelDebug..LevelError.
func Log(level int32, msg string) { hostLog(level, msg) }

// SetLogForTest has no effect in wasip1 builds, where Log always goes to
// the host; it exists so that test code builds for both.
func SetLogForTest(func(level int32, msg string)) {}
