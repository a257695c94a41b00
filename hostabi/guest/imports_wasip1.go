//go:build wasip1

package guest

//go:wasmimport rpengine log
func hostLog(level int32, msg string)

// Log writes a message to the engine's log, tagged with the plugin's name.
func Log(level int32, msg string) { hostLog(level, msg) }
