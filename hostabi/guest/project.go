package guest

import "github.com/rpengine/rpengine/hostabi/projection"

// The JSON projection's types live in hostabi/projection, shared with the
// host; these names keep the SDK's API in one place for plugin authors.
type (
	Kind       = projection.Kind
	Field      = projection.Field
	Projection = projection.Projection
	State      = projection.State
	Records    = projection.Records
)

const (
	KindString  = projection.KindString
	KindBool    = projection.KindBool
	KindStrings = projection.KindStrings
	KindRaw     = projection.KindRaw

	Absent = projection.Absent
	Null   = projection.Null
	Set    = projection.Set
)

// ProjectLocal runs the projection in the calling process, as the host
// would (native builds and tests).
func ProjectLocal(doc []byte, p Projection) (Records, error) { return projection.ProjectLocal(doc, p) }
