package vcenter

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/vmware/govmomi/vim25/types"
)

// decodeResult reads a (Continue)RetrievePropertiesEx answer with a
// scanner made for its one shape, a dozen times cheaper than govmomi's
// reflective XML decoder (which inside Wasm cost the listing 1.5 s of
// CPU at 2,000 hosts; PROFILE.md). It gives exactly what govmomi's
// decoder would, or ok false for anything it does not know (a fault, a
// missingSet, a value type other than those propSpecs ask for, CDATA, a
// namespace declared where vCenter declares none): the caller then
// decodes the body with govmomi. found is false for an answer without
// returnval (no object matched). The result's strings may share body's
// memory: body must not be written afterwards.
func decodeResult(body []byte) (res types.RetrieveResult, found, ok bool) {
	s := scanner{b: body}
	t := s.tag()
	if t == nil || !t.opensName("Envelope") || t.namespace(t.prefix) != soapNamespace {
		return res, false, false
	}
	env := *t // kept: s.tag's tag is good until the next one
	s.xsi = env.xsiPrefixes("")
	if t := s.tag(); t == nil || !t.opensName("Body") || t.prefix != env.prefix || t.declares || t.namespace("") != "" {
		return res, false, false
	}
	t = s.tag()
	if t == nil || t.end || t.declares || t.name != "RetrievePropertiesExResponse" && t.name != "ContinueRetrievePropertiesExResponse" {
		return res, false, false
	}
	if resp := *t; !resp.empty {
		t := s.tag()
		if t != nil && t.opens(nReturnval) && !t.declares {
			if found = s.result(&res); !found {
				return res, false, false
			}
			t = s.tag()
		}
		if t == nil || !t.closesName(resp.name) {
			return res, false, false
		}
	}
	if t := s.tag(); t == nil || !t.closesName("Body") || t.prefix != env.prefix {
		return res, false, false
	}
	if t := s.tag(); t == nil || !t.closesName("Envelope") || t.prefix != env.prefix {
		return res, false, false
	}
	s.skipSpace()
	return res, found, s.i == len(s.b)
}

// result reads returnval's token and objects, to its end tag.
func (s *scanner) result(res *types.RetrieveResult) bool {
	for {
		t := s.tag()
		var ok bool
		switch {
		case t == nil || t.declares:
			return false
		case t.closes(nReturnval):
			return true
		case t.opens(nToken):
			if res.Token, ok = s.textOf(t); !ok {
				return false
			}
		case t.opens(nObjects):
			var oc types.ObjectContent
			if !s.object(&oc) {
				return false
			}
			res.Objects = append(res.Objects, oc)
		default:
			return false
		}
	}
}

// object reads one objects element: obj and propSets (a missingSet is
// left to govmomi, which decodes its fault).
func (s *scanner) object(oc *types.ObjectContent) bool {
	for {
		t := s.tag()
		var ok bool
		switch {
		case t == nil || t.declares:
			return false
		case t.closes(nObjects):
			return true
		case t.opens(nObj):
			oc.Obj.Type = t.attr("type")
			if oc.Obj.Value, ok = s.textOf(t); !ok {
				return false
			}
		case t.opens(nPropSet):
			var dp types.DynamicProperty
			if !s.property(&dp) {
				return false
			}
			if oc.PropSet == nil {
				oc.PropSet = s.propSlab()
			}
			oc.PropSet = append(oc.PropSet, dp)
		default:
			return false
		}
	}
}

// propSlab is room for one object's propSets (the most propSpecs asks
// of a type), cut from a slab shared by many objects: one allocation per
// hundreds of objects rather than one each. An object with more
// propSets outgrows its room by append, as any slice does.
func (s *scanner) propSlab() []types.DynamicProperty {
	const room = 6
	if cap(s.props)-len(s.props) < room {
		s.props = make([]types.DynamicProperty, 0, 200*room)
	}
	n := len(s.props)
	s.props = s.props[:n+room]
	return s.props[n : n : n+room]
}

func (s *scanner) property(dp *types.DynamicProperty) bool {
	for {
		t := s.tag()
		var ok bool
		switch {
		case t == nil:
			return false
		case t.closes(nPropSet) && !t.declares:
			return true
		case t.opens(nName) && !t.declares:
			if dp.Name, ok = s.textOf(t); !ok {
				return false
			}
		case t.opens(nVal):
			if dp.Val, ok = s.value(t); !ok {
				return false
			}
		default:
			return false
		}
	}
}

// value reads a val by its xsi:type: only the types propSpecs' properties
// have, as govmomi's decoder would give them.
func (s *scanner) value(t *tag) (any, bool) {
	if t.kind == kUnread { // kept on the tag: a repeated val tag is read once
		t.kind, t.refType = s.kindOf(t), t.attr("type")
	}
	kind, refType := t.kind, t.refType // t may be s.cur, which the next tag overwrites
	if kind == kArray {
		return s.refs(t)
	}
	if kind == kRefused {
		return nil, false
	}
	text, ok := s.textOf(t)
	if !ok {
		return nil, false
	}
	switch kind {
	case kString:
		return text, true
	case kRef:
		return types.ManagedObjectReference{Type: refType, Value: text}, true
	case kConnection:
		if text == "connected" {
			return connected, true
		}
		return types.HostSystemConnectionState(text), true
	case kBool:
		b, err := strconv.ParseBool(strings.TrimSpace(text))
		return b, err == nil && text != ""
	case kShort:
		v, ok := integerOf(text, 16)
		return int16(v), ok
	case kInt:
		v, ok := integerOf(text, 32)
		return int32(v), ok
	case kLong:
		return s.longOf(text)
	}
	return nil, false
}

// longOf is an xsd:long's value, boxed; the box of the last one read is
// reused when the text is the same (a boxed value is never written).
func (s *scanner) longOf(text string) (any, bool) {
	if s.long.box != nil && text == s.long.text {
		return s.long.box, true
	}
	v, ok := integerOf(text, 64)
	if !ok {
		return nil, false
	}
	s.long.text, s.long.box = text, v
	return s.long.box, true
}

// valKind is a val's xsi:type, as value reads it.
type valKind uint8

const (
	kUnread valKind = iota
	kRefused
	kArray
	kString
	kRef
	kConnection
	kBool
	kShort
	kInt
	kLong
)

// kindOf is t's one xsi:type among those value reads, or kRefused.
func (s *scanner) kindOf(t *tag) valKind {
	kind, n := "", 0
	for _, a := range t.attrs {
		if a.local == "type" && a.prefix != "" {
			if !s.isXSI(t, a.prefix) {
				return kRefused
			}
			kind, n = a.val, n+1
		}
	}
	if n != 1 {
		return kRefused
	}
	switch kind {
	case "ArrayOfManagedObjectReference":
		return kArray
	case "xsd:string":
		return kString
	case "ManagedObjectReference":
		return kRef
	case "HostSystemConnectionState":
		return kConnection
	case "xsd:boolean":
		return kBool
	case "xsd:short":
		return kShort
	case "xsd:int":
		return kInt
	case "xsd:long":
		return kLong
	}
	return kRefused
}

// connected is the usual state, boxed once rather than for every host.
var connected any = types.HostSystemConnectionStateConnected

// integerOf parses as govmomi does (surrounding space allowed); an empty
// text, which govmomi reads as 0, is left to govmomi.
func integerOf(text string, bits int) (int64, bool) {
	v, err := strconv.ParseInt(strings.TrimSpace(text), 10, bits)
	return v, err == nil && text != ""
}

// refs reads an ArrayOfManagedObjectReference. Its references are
// gathered in a scratch slice kept across arrays, then cut from a slab
// (refSlab): one allocation per many arrays instead of the half dozen a
// 20-host cluster's growing slice costs.
func (s *scanner) refs(val *tag) (any, bool) {
	var a types.ArrayOfManagedObjectReference
	if val.empty {
		return a, true
	}
	s.scratch = s.scratch[:0]
	for {
		t := s.tag()
		var ok bool
		switch {
		case t == nil || t.declares:
			return nil, false
		case t.closes(nVal):
			if len(s.scratch) > 0 {
				a.ManagedObjectReference = s.refSlab(s.scratch)
			}
			return a, true
		case t.opens(nMOR):
			ref := types.ManagedObjectReference{Type: t.attr("type")}
			if ref.Value, ok = s.textOf(t); !ok {
				return nil, false
			}
			s.scratch = append(s.scratch, ref)
		default:
			return nil, false
		}
	}
}

// refSlab is a copy of refs cut from a shared slab, its capacity its
// length: an append to one array cannot write into the next.
func (s *scanner) refSlab(refs []types.ManagedObjectReference) []types.ManagedObjectReference {
	if cap(s.moRefs)-len(s.moRefs) < len(refs) {
		s.moRefs = make([]types.ManagedObjectReference, 0, max(len(refs), 1024))
	}
	n := len(s.moRefs)
	s.moRefs = append(s.moRefs, refs...)
	return s.moRefs[n : n+len(refs) : n+len(refs)]
}

// scanner walks the body's tags; it never allocates for a name or a
// text that needs no decoding.
type scanner struct {
	b   []byte
	i   int
	xsi string // " p1 p2 ": the Envelope's prefixes of the XMLSchema-instance namespace
	buf []attr
	// seen are tags already read, by a hash of their length and bytes
	// (element); a slot is filled once.
	seen [128]seenTag
	cur  tag // the last tag read, when not in seen
	// props is the slab propSlab cuts objects' PropSets from.
	props []types.DynamicProperty
	// scratch gathers one array's references; moRefs is the slab
	// refSlab cuts the arrays from.
	scratch, moRefs []types.ManagedObjectReference
	// long is the last xsd:long read, boxed: hosts and datastores of one
	// kind repeat their sizes, so one box serves them all.
	long struct {
		text string
		box  any
	}
}

type tag struct {
	prefix     string
	name       string // local name; views of the body, compared, never kept
	code       nameCode
	kind       valKind // a val's type, once value has read it
	refType    string  // a val's type attribute, likewise
	end, empty bool    // </name>, <name/>
	declares   bool    // an xmlns:prefix declaration among the attributes
	attrs      []attr  // the scanner's buffer: valid until the next tag
}

type attr struct{ prefix, local, val string }

const (
	xsiNamespace  = "http://www.w3.org/2001/XMLSchema-instance"
	soapNamespace = "http://schemas.xmlsoap.org/soap/envelope/"
)

// namespace is the URI t itself binds prefix to ("" for none).
func (t *tag) namespace(prefix string) string {
	for _, a := range t.attrs {
		if prefix == "" && a.prefix == "" && a.local == "xmlns" || prefix != "" && a.prefix == "xmlns" && a.local == prefix {
			return a.val
		}
	}
	return ""
}

func (t *tag) opensName(name string) bool  { return !t.end && t.name == name }
func (t *tag) closesName(name string) bool { return t.end && t.name == name }

// opens and closes compare the name's code, not its bytes: in the Wasm
// guest a string comparison is a call comparing a byte per step.
func (t *tag) opens(c nameCode) bool  { return !t.end && t.code == c }
func (t *tag) closes(c nameCode) bool { return t.end && t.code == c }

// nameCode numbers the element names this answer nests (0: another).
type nameCode uint8

const (
	nOther nameCode = iota
	nReturnval
	nToken
	nObjects
	nObj
	nPropSet
	nName
	nVal
	nMOR
)

func codeOf(name string) nameCode {
	switch name {
	case "returnval":
		return nReturnval
	case "token":
		return nToken
	case "objects":
		return nObjects
	case "obj":
		return nObj
	case "propSet":
		return nPropSet
	case "name":
		return nName
	case "val":
		return nVal
	case "ManagedObjectReference":
		return nMOR
	}
	return nOther
}

func (t *tag) attr(local string) string {
	for _, a := range t.attrs {
		if a.prefix == "" && a.local == local {
			return a.val
		}
	}
	return ""
}

// isXSI says whether prefix means the XMLSchema-instance namespace on t:
// as t declares it, or else as the Envelope did.
func (s *scanner) isXSI(t *tag, prefix string) bool {
	for _, a := range t.attrs {
		if a.prefix == "xmlns" && a.local == prefix {
			return a.val == xsiNamespace
		}
	}
	return strings.Contains(s.xsi, " "+prefix+" ")
}

// xsiPrefixes is outer with t's declarations applied: the prefixes bound
// to the XMLSchema-instance namespace, as " p1 p2 ".
func (t *tag) xsiPrefixes(outer string) string {
	if outer == "" {
		outer = " "
	}
	for _, a := range t.attrs {
		if a.prefix != "xmlns" {
			continue
		}
		outer = strings.ReplaceAll(outer, " "+a.local+" ", " ")
		if a.val == xsiNamespace {
			outer += a.local + " "
		}
	}
	return outer
}

// close reads the end tag of open.
func (s *scanner) close(open *tag) bool {
	code, name := open.code, open.name // open may be s.cur, which s.tag overwrites
	t := s.tag()
	if t == nil || !t.end {
		return false
	}
	if code != nOther {
		return t.code == code
	}
	return t.name == name
}

// textOf reads the character data of t up to its end tag: only text (no
// child element, comment or CDATA), entities decoded.
func (s *scanner) textOf(t *tag) (string, bool) {
	if t.empty {
		return "", true
	}
	text, ok := s.until('<')
	return text, ok && s.close(t)
}

// until reads the text from s.i up to stop (left unread), decoded. Text
// of plain printable ASCII, as nearly all of it is, is found with
// IndexByte and checked eight bytes at a time; other text goes through
// untilSlow.
func (s *scanner) until(stop byte) (string, bool) {
	j := bytes.IndexByte(s.b[s.i:], stop)
	if j < 0 {
		return "", false
	}
	if raw := s.b[s.i : s.i+j]; plain(raw) {
		s.i += j
		if k, ok := interned1(raw); ok {
			return k, true
		}
		return s.view(s.i-j, s.i), true // the body is never written: its text need not be copied
	}
	return s.untilSlow(stop)
}

// plain is raw free of '<', '&', control characters and non-ASCII
// bytes: text that needs no decoding and no check beyond this one.
func plain(raw []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(raw); i += 8 {
		x := *(*uint64)(unsafe.Pointer(&raw[i])) // one load, even in Wasm
		lt := x ^ (ones * '<')
		amp := x ^ (ones * '&')
		// a byte >= 0x80, < 0x20, or equal to '<' or '&' sets its high bit
		if (x|(x-ones*0x20)|(lt-ones)&^lt|(amp-ones)&^amp)&highs != 0 {
			return false
		}
	}
	for ; i < len(raw); i++ {
		if c := raw[i]; c < 0x20 || c >= utf8.RuneSelf || c == '<' || c == '&' {
			return false
		}
	}
	return true
}

// untilSlow is until in one pass byte by byte: '<', entities and other
// bytes are looked at only where the pass saw them.
func (s *scanner) untilSlow(stop byte) (string, bool) {
	b, start, amp, other := s.b, s.i, false, false // locals: the loop stays out of memory
	for i := start; i < len(b); i++ {
		c := b[i]
		switch {
		case c == stop:
			s.i = i
			if amp || other {
				return unescape(b[start:i])
			}
			return intern(b[start:i]), true
		case c == '<' || c < 0x20 && c != '\t' && c != '\n':
			return "", false
		case c == '&':
			amp = true
		case c >= utf8.RuneSelf:
			other = true
		}
	}
	return "", false
}

func (s *scanner) skipSpace() {
	b, i := s.b, s.i
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	s.i = i
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// tag reads the next start or end tag, skipping white space, the XML
// declaration and comments. Text other than white space between tags is
// refused: no element this answer holds mixes text with elements.
func (s *scanner) tag() *tag {
	for {
		s.skipSpace()
		rest := s.b[s.i:]
		switch {
		case len(rest) < 2 || rest[0] != '<':
			return nil
		case rest[1] == '?':
			decl := declaration(rest)
			if decl == 0 || s.i != 0 {
				return nil
			}
			s.i += decl
		case rest[1] == '!' && bytes.HasPrefix(rest, []byte("<!--")):
			j := bytes.Index(rest[4:], []byte("--"))
			if j < 0 || !bytes.HasPrefix(rest[4+j:], []byte("-->")) {
				return nil
			}
			s.i += 4 + j + 3
		case rest[1] == '!':
			return nil // CDATA, DOCTYPE
		default:
			return s.element()
		}
	}
}

// declaration is the length of the XML declaration rest starts with, if
// it is one vCenter sends (UTF-8); otherwise 0.
func declaration(rest []byte) int {
	for _, d := range []string{`<?xml version="1.0" encoding="UTF-8"?>`, `<?xml version="1.0" encoding="utf-8"?>`, `<?xml version="1.0"?>`} {
		if bytes.HasPrefix(rest, []byte(d)) {
			return len(d)
		}
	}
	return 0
}

// element reads <name attrs> or </name> at s.i. The answer repeats a
// few dozen distinct tags thousands of times, so each tag read is kept
// by its bytes: a tag equal to one already read (found by IndexByte and
// compared whole, both assembly even in the Wasm guest) is that tag
// again, without its bytes parsed one by one.
func (s *scanner) element() *tag {
	rest := s.b[s.i:]
	n := bytes.IndexByte(rest, '>') + 1
	var slot *seenTag
	if n > 2 {
		h := (n*131 + int(rest[1])*31 + int(rest[n/2])*7 + int(rest[n-2])) % len(s.seen)
		for probe := range 2 { // two slots per hash: a collision costs a comparison, not a parse
			e := &s.seen[(h+probe)%len(s.seen)]
			if same(e.raw, rest[:n]) {
				s.i += n
				return &e.t
			}
			if slot == nil && e.raw == nil {
				slot = e
			}
		}
	}
	start := s.i
	t, ok := s.parseElement()
	if !ok {
		return nil
	}
	if slot != nil && s.i-start == n {
		t.attrs = slices.Clone(t.attrs) // the slot's own: s.buf is reused
		*slot = seenTag{raw: rest[:n], t: t}
		return &slot.t
	}
	s.cur = t
	return &s.cur
}

// same is bytes.Equal eight bytes at a time: the Wasm port's memequal
// compares one byte per step, the bulk of this scanner's time there.
func same(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	i := 0
	for ; i+8 <= len(a); i += 8 {
		if *(*uint64)(unsafe.Pointer(&a[i])) != *(*uint64)(unsafe.Pointer(&b[i])) {
			return false
		}
	}
	for ; i < len(a); i++ {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// seenTag is a tag read before and the bytes it was read from.
type seenTag struct {
	raw []byte
	t   tag
}

// parseElement reads <name attrs> or </name> at s.i, byte by byte.
func (s *scanner) parseElement() (tag, bool) {
	s.i++ // '<'
	var t tag
	if s.b[s.i] == '/' {
		t.end = true
		s.i++
	}
	t.prefix, t.name = s.name()
	if t.name == "" {
		return t, false
	}
	t.code = codeOf(t.name)
	s.buf = s.buf[:0]
	for {
		spaced := s.i < len(s.b) && isSpace(s.b[s.i])
		s.skipSpace()
		if s.i >= len(s.b) {
			return t, false
		}
		switch c := s.b[s.i]; {
		case c == '>':
			s.i++
			t.attrs = s.buf
			return t, true
		case c == '/' && !t.end && s.i+1 < len(s.b) && s.b[s.i+1] == '>':
			s.i += 2
			t.empty, t.attrs = true, s.buf
			return t, true
		case t.end || !spaced:
			return t, false
		}
		a, ok := s.attribute()
		if !ok {
			return t, false
		}
		t.declares = t.declares || a.prefix == "xmlns"
		s.buf = append(s.buf, a)
	}
}

// attribute reads prefix:local="value" (or 'value').
func (s *scanner) attribute() (attr, bool) {
	var a attr
	a.prefix, a.local = s.name()
	if a.local == "" {
		return a, false
	}
	s.skipSpace()
	if s.i+1 >= len(s.b) || s.b[s.i] != '=' {
		return a, false
	}
	s.i++
	s.skipSpace()
	if s.i >= len(s.b) || s.b[s.i] != '"' && s.b[s.i] != '\'' {
		return a, false
	}
	q := s.b[s.i]
	s.i++
	var ok bool
	if a.val, ok = s.until(q); !ok {
		return a, false
	}
	s.i++ // the quote
	return a, true
}

// name reads a (prefixed) XML name; the strings are views of the body.
func (s *scanner) name() (prefix, local string) {
	b, start, colon := s.b, s.i, -1
	i := start
	for ; i < len(b); i++ {
		c := b[i]
		if c == ':' && colon < 0 {
			colon = i
		} else if nameChars[c] == 0 {
			break
		}
	}
	s.i = i
	first := func(at int) bool { return nameChars[s.b[at]] == 2 }
	if s.i == start || !first(start) || colon == s.i-1 || colon > 0 && !first(colon+1) {
		return "", ""
	}
	if colon < 0 {
		return "", s.view(start, s.i)
	}
	return s.view(start, colon), s.view(colon+1, s.i)
}

// nameChars is 2 for the ASCII characters a name may start with, 1 for
// those it may go on with (non-ASCII names are left to govmomi).
var nameChars = func() (t [256]byte) {
	for c := range 256 {
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_':
			t[c] = 2
		case c >= '0' && c <= '9' || c == '-' || c == '.':
			t[c] = 1
		}
	}
	return t
}()

// view is b[i:j] as a string without a copy: the body is never written,
// and text that needs no decoding is kept as such a view (the result
// keeps the body alive; text with entities is a copy made by unescape).
func (s *scanner) view(i, j int) string {
	if i == j {
		return ""
	}
	return unsafe.String(&s.b[i], j-i)
}

// unescape decodes XML's five entities and character references; any
// other '&', a raw '\r' (XML would normalise it) or invalid UTF-8 is
// refused.
func unescape(raw []byte) (string, bool) {
	if !validText(raw) {
		return "", false
	}
	if bytes.IndexByte(raw, '&') < 0 {
		return intern(raw), true
	}
	var out strings.Builder
	for len(raw) > 0 {
		amp := bytes.IndexByte(raw, '&')
		if amp < 0 {
			out.Write(raw)
			break
		}
		out.Write(raw[:amp])
		raw = raw[amp+1:]
		semi := bytes.IndexByte(raw, ';')
		if semi < 0 {
			return "", false
		}
		r, ok := entity(string(raw[:semi]))
		if !ok {
			return "", false
		}
		out.WriteRune(r)
		raw = raw[semi+1:]
	}
	return out.String(), true
}

// intern is string(raw), without a copy for the names and types every
// object repeats: one table slot (two for a collision) compared, since
// a switch over them costs a dozen calls in the Wasm guest.
func intern(raw []byte) string {
	if k, ok := interned1(raw); ok {
		return k
	}
	return string(raw)
}

// interned1 is raw's string in the intern table, if it has one.
func interned1(raw []byte) (string, bool) {
	if len(raw) > 0 {
		h := internHash(raw)
		if k := interned[h]; same(unsafe.Slice(unsafe.StringData(k), len(k)), raw) {
			return k, true
		}
		if k := interned[(h+1)%internSlots]; same(unsafe.Slice(unsafe.StringData(k), len(k)), raw) {
			return k, true
		}
	}
	return "", false
}

func internHash(raw []byte) int {
	return (len(raw)*131 + int(raw[0])*17 + int(raw[len(raw)/2])*7 + int(raw[len(raw)-1])) % internSlots
}

const internSlots = 128

// interned holds the strings intern gives without a copy.
var interned = func() (t [internSlots]string) {
	for _, k := range []string{
		"HostSystem",
		"Datastore",
		"summary.hardware.numCpuThreads",
		"summary.hardware.memorySize",
		"runtime.inMaintenanceMode",
		"runtime.connectionState",
		"connected",
		"name",
		"parent",
		"host",
		"datastore",
		"summary.capacity",
		"summary.accessible",
		"summary.type",
		"summary.maintenanceMode",
		"normal",
		xsiNamespace,
		"ManagedObjectReference",
		"ArrayOfManagedObjectReference",
		"HostSystemConnectionState",
		"ClusterComputeResource",
	} {
		h := internHash([]byte(k))
		if t[h] != "" {
			h = (h + 1) % len(t)
		}
		if t[h] != "" {
			panic("vcenter: intern table collision: " + k)
		}
		t[h] = k
	}
	return t
}()

// validText is raw free of what XML forbids, and of '\r' (XML would
// normalise it).
func validText(raw []byte) bool {
	for i := 0; i < len(raw); {
		if c := raw[i]; c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(raw[i:])
		if r == utf8.RuneError && n == 1 || !isChar(r) {
			return false
		}
		i += n
	}
	return true
}

// isChar is XML 1.0's Char production, less '\r'.
func isChar(r rune) bool {
	return r == '\t' || r == '\n' || r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= utf8.MaxRune
}

func entity(e string) (rune, bool) {
	switch e {
	case "amp":
		return '&', true
	case "lt":
		return '<', true
	case "gt":
		return '>', true
	case "quot":
		return '"', true
	case "apos":
		return '\'', true
	}
	base, digits := 10, ""
	if d, ok := strings.CutPrefix(e, "#x"); ok {
		base, digits = 16, d
	} else if d, ok := strings.CutPrefix(e, "#"); ok {
		digits = d
	}
	n, err := strconv.ParseUint(digits, base, 32)
	if err != nil || digits == "" || digits[0] == '+' || !isChar(rune(n)) && n != '\r' || n > utf8.MaxRune {
		return 0, false
	}
	return rune(n), true
}
