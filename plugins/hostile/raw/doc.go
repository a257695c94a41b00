// Command raw is a plugin that breaks the ABI itself, for the host's
// load-time checks and answer validation. It does not use the SDK: it
// exports the functions by hand. Its config (a JSON string, matched
// loosely) picks a broken answer: "malformed" JSON, an answer "outside"
// guest memory, an "incomplete" listing, or a confirm_deleted that "lies"
// about uuids it was not asked; an object {"repeat": {"head", "item",
// "sep", "count", "tail"}} makes list_nodes answer those bytes, for the
// hostile-answer corpus (millions of records, giant strings). Build tags break the module instead:
// abi2 (claims ABI version 2), badsig (list_nodes with the wrong
// signature), noexport (no list_instances), badimport (imports a host
// function that does not exist).
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared [-tags ...].
// Never deploy it.
package main
