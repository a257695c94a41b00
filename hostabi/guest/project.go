package guest

import "github.com/rpengine/rpengine/hostabi/projection"

// The JSON projection's types live in hostabi/projection, shared with the
// host; these names keep the SDK's API in one place for plugin authors.
type (
	// Kind is the type of one projected field.
	Kind = projection.Kind
	// Field names one field of each record and its kind.
	Field = projection.Field
	// Projection says which array of a JSON document to read, and which
	// fields of its records.
	Projection = projection.Projection
	// State tells a field's presence in one record: absent, null or set.
	State = projection.State
	// Records are the projected records, read by index and field.
	Records = projection.Records
)

// The kinds of a projected field.
const (
	KindString  = projection.KindString  // a JSON string
	KindBool    = projection.KindBool    // true or false
	KindStrings = projection.KindStrings // an array of strings
	KindRaw     = projection.KindRaw     // any value, kept as its raw JSON
)

// The states of a field in one record.
const (
	Absent = projection.Absent // the record has no such key
	Null   = projection.Null   // the key's value is null
	Set    = projection.Set    // the key has a value
)

// ProjectLocal runs the projection in the calling process, as the host
// would (native builds and tests).
func ProjectLocal(doc []byte, p Projection) (Records, error) { return projection.ProjectLocal(doc, p) }
