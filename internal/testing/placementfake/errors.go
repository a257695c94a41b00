package placementfake

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// Error codes, named after placement/errors.py. They appear in error bodies
// from microversion 1.23 on.
const (
	CodeDefault              = "placement.undefined_code"
	CodeInventoryInUse       = "placement.inventory.inuse"
	CodeConcurrentUpdate     = "placement.concurrent_update"
	CodeDuplicateName        = "placement.duplicate_name"
	CodeProviderInUse        = "placement.resource_provider.inuse"
	CodeProviderCannotDelete = "placement.resource_provider.cannot_delete_parent"
)

// explanations are webob's fixed first paragraph of each error detail. The
// real detail is "<explanation>\n\n <message>  ".
var explanations = map[int]string{
	400: "The server could not comply with the request since it is either malformed or otherwise incorrect.",
	403: "Access was denied to this resource.",
	404: "The resource could not be found.",
	409: "There was a conflict when trying to complete your request.",
	500: "The server has either erred or is incapable of performing the requested operation.",
	501: "The server has not implemented the requested operation.",
	502: "Bad gateway.",
	503: "The server is currently unavailable. Please try again at a later time.",
	504: "The gateway has timed out.",
}

// apiError is one entry of {"errors": [...]}. MaxVersion and MinVersion
// are only set on 406, like the real server.
type apiError struct {
	Status     int    `json:"status"`
	Title      string `json:"title"`
	Detail     string `json:"detail"`
	Code       string `json:"code,omitempty"`
	RequestID  string `json:"request_id"`
	MaxVersion string `json:"max_version,omitempty"`
	MinVersion string `json:"min_version,omitempty"`
}

type errorBody struct {
	Errors []apiError `json:"errors"`
}

// fail answers with the real error shape. code is dropped below 1.23 and
// when the microversion could not be parsed (c.minor < 0).
func (c *call) fail(status int, code, msg string) {
	detail := explanations[status] + "\n\n " + msg + "  "
	c.failDetail(status, code, detail)
}

func (c *call) failDetail(status int, code, detail string) {
	e := apiError{Status: status, Title: http.StatusText(status), Detail: detail, RequestID: c.reqID}
	if c.minor >= 23 {
		e.Code = code
		if e.Code == "" {
			e.Code = CodeDefault
		}
	}
	c.reply(status, errorBody{Errors: []apiError{e}})
}

// failUnauthorized copies the keystonemiddleware-style 401 body, which does
// not have the errors shape.
func (c *call) failUnauthorized() {
	c.reply(http.StatusUnauthorized, map[string]string{
		"message": "This server could not verify that you are authorized to access the document you requested. Either you supplied the wrong credentials (e.g., bad password), or your browser does not understand how to supply the credentials required.<br /><br />\n\n\n",
		"code":    "401 Unauthorized",
		"title":   "Unauthorized",
	})
}

// failVersion answers an unusable microversion header: 400 for garbage,
// 406 for an unsupported version. Neither carries a code.
func (c *call) failVersion(status int, msg string) {
	e := apiError{Status: status, Title: http.StatusText(status), RequestID: c.reqID}
	if status == http.StatusNotAcceptable {
		e.Detail = "The resource could not be generated that was acceptable to your browser (content of type application/json. \n\n " + msg
		e.MaxVersion = "1." + strconv.Itoa(maxMinor)
		e.MinVersion = "1.0"
	} else {
		e.Detail = explanations[400] + "\n\n " + msg + "  "
	}
	c.reply(status, errorBody{Errors: []apiError{e}})
}

// reply writes v as JSON (nil: no body).
func (c *call) reply(status int, v any) {
	h := c.w.Header()
	if v == nil {
		c.w.WriteHeader(status)
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only our own types are encoded here
	}
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	c.w.WriteHeader(status)
	_, _ = c.w.Write(b)
}
