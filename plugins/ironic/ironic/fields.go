package ironic

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/guest"
)

// The optional node fields (hostabi.NodeFields) the engine asks for when
// its aggregate rules match on them: Ironic's owner, and named keys of a
// node's properties or extra. Ironic is asked for owner, properties and
// extra only then, and only those named: a listing without such rules
// costs what it did. The properties and extra objects come whole from
// Ironic (fields= selects no key inside them); the host projects each as
// its JSON text and the plugin keeps only the keys named.

// needOwner is the first version with the owner field.
var needOwner = version{1, 50}

// The objects a property name may name a key of.
const (
	objProperties = iota
	objExtra
)

var objNames = [...]string{objProperties: "properties", objExtra: "extra"}

// want is what the call being served asks beyond the listing's fields,
// and where the page's projection holds it.
type want struct {
	f     hostabi.NodeFields
	page  guest.Projection // nodePage, then owner, properties, extra as asked
	owner int              // index in page.Fields, -1 if not asked
	objs  [2]int           // properties, extra: index in page.Fields, or -1
	keys  []propKey        // f.Properties, parsed
}

// propKey is one property asked: its name as asked, and where it is.
type propKey struct {
	name string
	obj  int
	key  string
}

// newWant reads f; nil when it asks for nothing. A name that is not
// "properties.<key>" or "extra.<key>" is an error naming it.
func newWant(f hostabi.NodeFields) (*want, error) {
	if f.Empty() {
		return nil, nil
	}
	w := &want{f: f, owner: -1, objs: [2]int{-1, -1}}
	w.page = guest.Projection{Array: nodePage.Array, Fields: slices.Clone(nodePage.Fields), Top: nodePage.Top}
	add := func(name string, kind guest.Kind) int {
		w.page.Fields = append(w.page.Fields, guest.Field{Name: name, Kind: kind})
		return len(w.page.Fields) - 1
	}
	if f.Owner {
		w.owner = add("owner", guest.KindString)
	}
	for _, name := range f.Properties {
		obj, key, ok := strings.Cut(name, ".")
		o := slices.Index(objNames[:], obj)
		if !ok || o < 0 || key == "" {
			return nil, fmt.Errorf("property %q: the Ironic plugin reads \"properties.<key>\" or \"extra.<key>\"", clip(name))
		}
		if w.objs[o] < 0 {
			w.objs[o] = add(obj, guest.KindRaw)
		}
		w.keys = append(w.keys, propKey{name, o, key})
	}
	return w, nil
}

// serve sets the optional fields of the call about to be served (the
// host serialises calls into a plugin, so one call's fields at a time).
func (c *Client) serve(f hostabi.NodeFields) error {
	w, err := newWant(f)
	c.want = w
	return err
}

// projection is the page projection of the call being served.
func (c *Client) projection() *guest.Projection {
	if c.want != nil {
		return &c.want.page
	}
	return c.project
}

// decodeBody decodes a page's body as the call being served needs it.
func (c *Client) decodeBody(body []byte) (Page, error) {
	if c.want == nil {
		return c.decode(body)
	}
	r, err := guest.Project(body, c.want.page)
	if err != nil {
		return nil, err
	}
	return projected{r: r, w: c.want}, nil
}

// fieldList is the fields= of a node request at v.
func (w *want) fieldList(v version) string {
	f := nodeFields(v)
	if w != nil {
		for _, i := range append([]int{w.owner}, w.objs[:]...) {
			if i >= 0 {
				f = append(f, w.page.Fields[i].Name)
			}
		}
	}
	return strings.Join(f, ",")
}

// check says whether Ironic at v has the fields asked.
func (w *want) check(v version) error {
	if w != nil && w.owner >= 0 && v.less(needOwner) {
		return fmt.Errorf("the node owner needs Ironic API %s; the server speaks %s", needOwner, v)
	}
	return nil
}

// fill sets node n's optional fields from record i of r. A properties
// or extra member that is not an object (or null) fails: the node's
// place would be a guess.
func (w *want) fill(r *guest.Records, i int, n *hostabi.Node) error {
	if w.owner >= 0 {
		n.Owner = r.String(i, w.owner)
	}
	var objs [2]string
	for o, f := range w.objs {
		if f >= 0 {
			if objs[o] = r.String(i, f); objs[o] == "null" {
				objs[o] = ""
			}
		}
	}
	for _, k := range w.keys {
		if objs[k.obj] == "" {
			continue
		}
		raw, found, ok := member(objs[k.obj], k.key)
		if !ok {
			return fmt.Errorf("nodes[%d].%s is not an object", i, objNames[k.obj])
		}
		if v, ok := scalar(raw); found && ok {
			if n.Properties == nil {
				n.Properties = make(map[string]string, len(w.keys))
			}
			n.Properties[k.name] = v
		}
	}
	return nil
}

// scalar is a property's value as a rule compares it: a string as is, a
// number or a bool as its JSON text; null, an object or an array (and
// an absent key) is no value.
func scalar(raw string) (string, bool) {
	switch {
	case raw == "" || raw[0] == '{' || raw[0] == '[' || raw == "null":
		return "", false
	case raw[0] == '"' && strings.IndexByte(raw, '\\') < 0:
		return raw[1 : len(raw)-1], true
	case raw[0] == '"':
		var s string
		return s, json.Unmarshal([]byte(raw), &s) == nil
	}
	return raw, true
}
