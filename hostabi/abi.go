package hostabi

// Version is the ABI version this host and SDK implement. A plugin reports
// its own through the ExportABIVersion export; the host refuses a mismatch.
const Version = 1

// Exports every plugin must provide. Each operation takes a JSON request in
// guest memory (ptr, len) and returns a packed uint64: the guest pointer in
// the high 32 bits and the length of the JSON response in the low 32 bits.
// The response stays valid until the next call into the plugin.
const (
	ExportInitialize    = "_initialize"
	ExportABIVersion    = "rpengine_abi_version" // () -> i32
	ExportAlloc         = "rpengine_alloc"       // (len i32) -> ptr i32
	ExportFree          = "rpengine_free"        // (ptr i32)
	ExportDescribe      = "rpengine_describe"    // name, version, optional operations; no config needed
	ExportConfigure     = "rpengine_configure"
	ExportListNodes     = "rpengine_list_nodes"
	ExportListInstances = "rpengine_list_instances"
)

// Optional exports: a plugin that lacks one lacks the capability, and the
// host detects that at load. A plugin has it when it exports the function
// and lists it in DescribeResponse.Operations (an SDK exports them all).
const (
	// ExportConfirmDeleted answers, for each node uuid asked, whether the
	// source positively knows it is gone (e.g. Ironic answered 404). The
	// engine deletes a provider only on this proof.
	ExportConfirmDeleted = "rpengine_confirm_deleted"
)

// HostModule is the import module name of the host functions.
const HostModule = "rpengine"

// Host functions a plugin may import from HostModule.
const (
	ImportLog = "log" // (level i32, ptr i32, len i32)

	// ImportHTTPRequest performs one HTTP request to a granted service:
	// (req_ptr i32, req_len i32) -> resp_len i32. The request is a frame
	// (AppendFrame) of an HTTPRequestHead and the body; the host keeps the
	// response frame (HTTPResponseHead and body) until the guest pulls it
	// with ImportHTTPResponseRead or makes another request.
	ImportHTTPRequest = "http_request"
	// ImportHTTPResponseRead copies the pending response frame into guest
	// memory: (dst_ptr i32, dst_len i32) -> copied i32.
	ImportHTTPResponseRead = "http_response_read"
)

// Log levels for ImportLog, in slog's order.
const (
	LevelDebug = -4
	LevelInfo  = 0
	LevelWarn  = 4
	LevelError = 8
)

// Pack and Unpack turn a guest (pointer, length) pair into the single
// uint64 an export returns; Go's wasmexport allows one result only.
func Pack(ptr, n uint32) uint64 { return uint64(ptr)<<32 | uint64(n) }

// Unpack is the inverse of Pack.
func Unpack(v uint64) (ptr, n uint32) { return uint32(v >> 32), uint32(v) }
