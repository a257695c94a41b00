package hostabi

import "embed"

// Source is this module's own source (go.mod, the ABI and SDK packages,
// ABI.md), so that `engine plugin new` can write the SDK beside a plugin
// built outside this repository: the module is on no module proxy, and a
// plugin's go.mod replaces it with that copy (docs/PLUGIN-SDK.md).
//
//go:embed go.mod ABI.md *.go guest/*.go projection/*.go
var Source embed.FS
