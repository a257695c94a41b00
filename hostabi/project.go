package hostabi

// ProjectSpec is a projection a plugin asks of the host for an HTTP
// response (HTTPRequestHead.Project): one record per element of the
// array under the body's top-level member Array, holding the members
// Fields of each element in that order, and the top-level members Top.
// The guest SDK's form of it is guest.Projection.
type ProjectSpec struct {
	Array  string         `json:"array,omitempty"`
	Fields []ProjectField `json:"fields,omitempty"`
	Top    []ProjectField `json:"top,omitempty"`
}

// ProjectField is one member of a projection and the JSON type it must
// have: one of the Project* kinds.
type ProjectField struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
}

// The kinds of a ProjectField.
const (
	ProjectString  = "string"  // a JSON string (or null)
	ProjectBool    = "bool"    // true or false (or null)
	ProjectStrings = "strings" // an array of strings (or null)
	ProjectRaw     = "raw"     // any value, kept as its JSON text
)

// MaxProjectFields bounds Fields and Top of one ProjectSpec each: every
// record costs the host 8 bytes per field, whatever the body holds.
const MaxProjectFields = 256
