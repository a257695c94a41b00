package vcenter

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
	"github.com/vmware/govmomi/vim25/xml"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/testing/vcsimtest"
	"github.com/rpengine/rpengine/internal/vcsession"
)

// slowResult is govmomi's reading of a RetrievePropertiesEx answer, the
// reference decodeResult must equal.
func slowResult(t testing.TB, body []byte) (types.RetrieveResult, bool) {
	t.Helper()
	decode := func(b any) {
		dec := xml.NewDecoder(bytes.NewReader(body))
		dec.TypeFunc = types.TypeFunc()
		if err := dec.Decode(&soap.Envelope{Body: b}); err != nil {
			t.Fatalf("govmomi cannot decode what decodeResult read: %v\n%s", err, body)
		}
	}
	if bytes.Contains(body, []byte("ContinueRetrievePropertiesExResponse")) {
		var b methods.ContinueRetrievePropertiesExBody
		decode(&b)
		if b.Res == nil {
			return types.RetrieveResult{}, false
		}
		return b.Res.Returnval, true
	}
	var b methods.RetrievePropertiesExBody
	decode(&b)
	if b.Res == nil || b.Res.Returnval == nil {
		return types.RetrieveResult{}, false
	}
	return *b.Res.Returnval, true
}

func sameAsGovmomi(t testing.TB, body []byte) {
	t.Helper()
	fast, found, ok := decodeResult(body)
	if !ok {
		t.Fatalf("decodeResult refused the answer:\n%.2000s", body)
	}
	slow, slowFound := slowResult(t, body)
	if bytes.Contains(body, []byte("ContinueRetrievePropertiesExResponse")) {
		found = slowFound // govmomi's Continue has a returnval even when the body has none: no objects, no token either way
	}
	if found != slowFound || !reflect.DeepEqual(fast, slow) {
		t.Fatalf("decodeResult and govmomi differ:\n fast %v %+v\n slow %v %+v", found, fast, slowFound, slow)
	}
}

// recorder keeps every answer vcsim gives the plugin's code.
type recorder struct {
	u      *url.URL
	s      *vcsession.Session
	mu     sync.Mutex
	bodies [][]byte
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host, req.Host = r.u.Scheme, r.u.Host, r.u.Host
	if err := r.s.Apply(req.Context(), req); err != nil {
		return nil, err
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	r.mu.Lock()
	r.bodies = append(r.bodies, b)
	r.mu.Unlock()
	return resp, err
}

// vcsim's real answers, over several pages, are read by decodeResult
// (never left to govmomi) and read exactly as govmomi reads them.
func TestDecodeResultReadsVcsimAnswersAsGovmomi(t *testing.T) {
	sim := vcsimtest.Start(t, vcsimtest.Model{Clusters: 3, Hosts: 4, Datastores: 2})
	u, _ := url.Parse(sim.URL)
	sess, err := vcsession.New(sim.URL, vcsimtest.User, vcsimtest.Password, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close(context.Background())
	cfg, _ := ParseConfig([]byte(`{"page_size": 7, "datastore_types": ["OTHER"]}`))
	rec := &recorder{u: u, s: sess}
	nodes, err := New(cfg, rec, nil).ListNodes(hostabi.ListNodesRequest{})
	if err != nil || len(nodes) != 3 {
		t.Fatalf("%d nodes, %v", len(nodes), err)
	}
	pages := 0
	for _, b := range rec.bodies {
		if bytes.Contains(b, []byte("RetrievePropertiesExResponse")) {
			pages++
			sameAsGovmomi(t, b)
		}
	}
	if pages < 3 {
		t.Fatalf("%d pages of 7 objects: the test did not page", pages)
	}
}

const envelope = `<?xml version="1.0" encoding="UTF-8"?>
<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><soapenv:Body>` +
	`<RetrievePropertiesExResponse xmlns="urn:vim25">%s</RetrievePropertiesExResponse></soapenv:Body></soapenv:Envelope>`

func answer(inner string) []byte { return []byte(strings.Replace(envelope, "%s", inner, 1)) }

// What decodeResult accepts, it reads as govmomi does: entities,
// character references, white space, comments, local namespace
// declarations, empty values, no returnval at all.
func TestDecodeResultEqualsGovmomi(t *testing.T) {
	for name, inner := range map[string]string{
		"nothing": ``,
		"entities": `<returnval><token>t&amp;1</token><objects><obj type="ClusterComputeResource">domain-c7</obj>` +
			`<propSet><name>name</name><val xsi:type="xsd:string">a &amp; b &lt;c&gt; &quot;d&quot; &apos;e&apos; &#38;&#x26; é</val></propSet></objects></returnval>`,
		"spaces and comments": "<returnval>\n  <!-- a comment -->\n  <objects>\n <obj type=\"HostSystem\">host-1</obj>\n" +
			`<propSet><name>summary.hardware.numCpuThreads</name><val xsi:type="xsd:short"> 12 </val></propSet>` + "\n" +
			`<propSet><name>summary.hardware.memorySize</name><val xsi:type="xsd:long">-4294430720</val></propSet>` +
			`<propSet><name>runtime.inMaintenanceMode</name><val xsi:type='xsd:boolean'>1</val></propSet>` +
			`<propSet><name>runtime.connectionState</name><val xmlns:X="http://www.w3.org/2001/XMLSchema-instance" X:type="HostSystemConnectionState">notResponding</val></propSet>` +
			"</objects>\n</returnval>\n",
		"references": `<returnval><objects><obj type="ClusterComputeResource">domain-c7</obj>` +
			`<propSet><name>parent</name><val xsi:type="ManagedObjectReference" type="Folder">group-h4</val></propSet>` +
			`<propSet><name>host</name><val xsi:type="ArrayOfManagedObjectReference"><ManagedObjectReference type="HostSystem">host-1</ManagedObjectReference>` +
			`<ManagedObjectReference type="HostSystem">host-2</ManagedObjectReference></val></propSet>` +
			`<propSet><name>datastore</name><val xsi:type="ArrayOfManagedObjectReference"/></propSet></objects></returnval>`,
		"empty string and int": `<returnval><objects><obj type="Datastore">ds-1</obj><propSet><name>name</name><val xsi:type="xsd:string"/></propSet>` +
			`<propSet><name>x</name><val xsi:type="xsd:int">2147483647</val></propSet><propSet><name>y</name><val xsi:type="xsd:string"></val></propSet></objects></returnval>`,
	} {
		t.Run(name, func(t *testing.T) { sameAsGovmomi(t, answer(inner)) })
	}
}

// What decodeResult does not know it leaves to govmomi.
func TestDecodeResultRefusesWhatItDoesNotKnow(t *testing.T) {
	obj := func(val string) string {
		return `<returnval><objects><obj type="Datastore">ds-1</obj><propSet><name>p</name>` + val + `</propSet></objects></returnval>`
	}
	for name, body := range map[string][]byte{
		"missingSet": answer(`<returnval><objects><obj type="HostSystem">host-1</obj><missingSet><path>runtime</path>` +
			`<fault><fault xsi:type="NotAuthenticated"></fault></fault></missingSet></objects></returnval>`),
		"fault": []byte(`<?xml version="1.0"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>` +
			`<soapenv:Fault><faultcode>ServerFaultCode</faultcode><faultstring>no</faultstring></soapenv:Fault></soapenv:Body></soapenv:Envelope>`),
		"another type":      answer(obj(`<val xsi:type="xsd:dateTime">2026-01-01T00:00:00Z</val>`)),
		"a structure":       answer(obj(`<val xsi:type="HostHardwareSummary"><numCpuThreads>2</numCpuThreads></val>`)),
		"unbound prefix":    answer(obj(`<val q:type="xsd:string">x</val>`)),
		"rebound prefix":    answer(obj(`<val xmlns:xsi="urn:other" xsi:type="xsd:string">x</val>`)),
		"no type":           answer(obj(`<val>x</val>`)),
		"two types":         answer(obj(`<val xsi:type="xsd:string" xmlns:X="http://www.w3.org/2001/XMLSchema-instance" X:type="xsd:int">1</val>`)),
		"CDATA":             answer(obj(`<val xsi:type="xsd:string"><![CDATA[x]]></val>`)),
		"unknown entity":    answer(obj(`<val xsi:type="xsd:string">&nbsp;</val>`)),
		"bad reference":     answer(obj(`<val xsi:type="xsd:string">&#0;</val>`)),
		"empty int":         answer(obj(`<val xsi:type="xsd:int"></val>`)),
		"int overflow":      answer(obj(`<val xsi:type="xsd:short">40000</val>`)),
		"mismatched end":    answer(obj(`<val xsi:type="xsd:string">x</name>`)),
		"text among tags":   answer(`<returnval>x<token>t</token></returnval>`),
		"declaration later": answer(`<returnval xmlns:xsi="urn:other"></returnval>`),
		"truncated":         answer(obj(`<val xsi:type="xsd:string">x`))[:300],
		"trailing":          append(answer(``), "<x/>"...),
		"carriage return":   answer(obj("<val xsi:type=\"xsd:string\">a\r\nb</val>")),
	} {
		if _, _, ok := decodeResult(body); ok {
			t.Errorf("%s: accepted", name)
		}
	}
}

// A repeated tag is read from the scanner's table of tags seen; a '>'
// inside an attribute's value makes IndexByte's guess of the tag's end
// wrong, which must only cost the table lookup.
func TestDecodeResultRepeatedTags(t *testing.T) {
	host := func(i int, ty string) string {
		return fmt.Sprintf(`<objects><obj type="%s">host-%d</obj>`+
			`<propSet><name>summary.hardware.memorySize</name><val xmlns:X="http://www.w3.org/2001/XMLSchema-instance" X:type="xsd:long">%d</val></propSet>`+
			`<propSet><name>parent</name><val xmlns:X="http://www.w3.org/2001/XMLSchema-instance" X:type="ManagedObjectReference" type="%s">f-%d</val></propSet></objects>`, ty, i, i, ty, i)
	}
	var b strings.Builder
	b.WriteString(`<returnval>`)
	for i := range 5 {
		b.WriteString(host(i, "HostSystem"))
		b.WriteString(host(i, "Host>System"))
	}
	b.WriteString(`</returnval>`)
	body := answer(b.String())
	sameAsGovmomi(t, body)
	res, _, _ := decodeResult(body)
	if len(res.Objects) != 10 || res.Objects[1].Obj.Type != "Host>System" || res.Objects[8].PropSet[1].Val.(types.ManagedObjectReference).Type != "HostSystem" {
		t.Fatalf("%+v", res.Objects)
	}
}

// plain's eight-bytes-at-a-time check says what a byte loop says, for
// every byte at every place of texts of every length to 24.
func TestPlainIsTheByteCheck(t *testing.T) {
	slow := func(raw []byte) bool {
		for _, c := range raw {
			if c < 0x20 || c >= 0x80 || c == '<' || c == '&' {
				return false
			}
		}
		return true
	}
	for n := range 25 {
		for at := range n {
			for c := range 256 {
				raw := bytes.Repeat([]byte{'a'}, n)
				raw[at] = byte(c)
				if plain(raw) != slow(raw) {
					t.Fatalf("plain(%q) = %v", raw, plain(raw))
				}
				raw[n-1-at] = ' ' // a space beside it: borrows across bytes
				if plain(raw) != slow(raw) {
					t.Fatalf("plain(%q) = %v", raw, plain(raw))
				}
			}
		}
	}
}

// intern gives the table's own string for each of its entries, and a
// copy for anything else.
func TestInternGivesTheTableString(t *testing.T) {
	n := 0
	for _, k := range interned {
		if k == "" {
			continue
		}
		n++
		if got := intern([]byte(k)); got != k || unsafe.StringData(got) != unsafe.StringData(k) {
			t.Errorf("intern(%q) is a copy", k)
		}
	}
	if n < 20 {
		t.Fatalf("%d strings in the table", n)
	}
	if got := intern([]byte("HostSystems")); got != "HostSystems" {
		t.Fatal(got)
	}
}

// Whatever decodeResult accepts, govmomi reads the same.
func FuzzDecodeResult(f *testing.F) {
	f.Add(answer(`<returnval><token>t</token><objects><obj type="HostSystem">host-1</obj>` +
		`<propSet><name>n</name><val xsi:type="xsd:long">5</val></propSet>` +
		`<propSet><name>h</name><val xsi:type="ArrayOfManagedObjectReference"><ManagedObjectReference type="HostSystem">host-2</ManagedObjectReference></val></propSet>` +
		`<propSet><name>s</name><val xsi:type="xsd:string">a&amp;b</val></propSet></objects></returnval>`))
	f.Add(answer(``))
	f.Add(vcsimPage(3)) // tags repeated, as the scanner's table of them expects
	f.Fuzz(func(t *testing.T, body []byte) {
		if _, _, ok := decodeResult(body); ok {
			sameAsGovmomi(t, body)
		}
	})
}

// vcsimPage is an answer in vcsim's shape (each val declares its own xsi
// prefix): one cluster of hosts hosts.
func vcsimPage(hosts int) []byte {
	val := `<val xmlns:XMLSchema-instance="http://www.w3.org/2001/XMLSchema-instance" XMLSchema-instance:type=`
	var b strings.Builder
	b.WriteString(`<returnval><token>t</token><objects><obj type="ClusterComputeResource">domain-c7</obj><propSet><name>host</name>` + val + `"ArrayOfManagedObjectReference">`)
	for i := range hosts {
		fmt.Fprintf(&b, `<ManagedObjectReference type="HostSystem">host-%d</ManagedObjectReference>`, i)
	}
	b.WriteString(`</val></propSet></objects>`)
	for i := range hosts {
		fmt.Fprintf(&b, `<objects><obj type="HostSystem">host-%d</obj>`+
			`<propSet><name>summary.hardware.numCpuThreads</name>%s"xsd:short">2</val></propSet>`+
			`<propSet><name>summary.hardware.memorySize</name>%s"xsd:long">4294430720</val></propSet>`+
			`<propSet><name>runtime.inMaintenanceMode</name>%s"xsd:boolean">false</val></propSet>`+
			`<propSet><name>runtime.connectionState</name>%s"HostSystemConnectionState">connected</val></propSet></objects>`, i, val, val, val, val)
	}
	b.WriteString(`</returnval>`)
	return answer(b.String())
}

// BenchmarkDecode2000Hosts reads one page of 2,000 hosts with
// decodeResult and with govmomi's decoder.
func BenchmarkDecode2000Hosts(b *testing.B) {
	body := vcsimPage(2000)
	sameAsGovmomi(b, body)
	b.Run("scan", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			if _, _, ok := decodeResult(body); !ok {
				b.Fatal("refused")
			}
		}
	})
	b.Run("govmomi", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			slowResult(b, body)
		}
	})
}

// Arrays cut from the shared slab end at their capacity (an append to
// one cannot write into the next), and a repeated xsd:long shares its box
// while a different one does not.
func TestDecodeResultSlabsAndBoxes(t *testing.T) {
	ref := func(v string) string {
		return `<ManagedObjectReference type="HostSystem">` + v + `</ManagedObjectReference>`
	}
	cluster := func(id, hosts string) string {
		return `<objects><obj type="ClusterComputeResource">` + id + `</obj><propSet><name>host</name>` +
			`<val xsi:type="ArrayOfManagedObjectReference">` + hosts + `</val></propSet></objects>`
	}
	long := func(id, v string) string {
		return `<objects><obj type="Datastore">` + id + `</obj><propSet><name>summary.capacity</name><val xsi:type="xsd:long">` + v + `</val></propSet></objects>`
	}
	body := answer(`<returnval>` + cluster("domain-c1", ref("host-1")+ref("host-2")) + cluster("domain-c2", ref("host-3")) +
		long("ds-1", "4294967296") + long("ds-2", "4294967296") + long("ds-3", " 4294967296") + long("ds-4", "8589934592") + `</returnval>`)
	sameAsGovmomi(t, body)
	res, _, ok := decodeResult(body)
	if !ok || len(res.Objects) != 6 {
		t.Fatalf("decoded %v, %d objects", ok, len(res.Objects))
	}
	first := res.Objects[0].PropSet[0].Val.(types.ArrayOfManagedObjectReference).ManagedObjectReference
	second := res.Objects[1].PropSet[0].Val.(types.ArrayOfManagedObjectReference).ManagedObjectReference
	if len(first) != 2 || cap(first) != 2 || len(second) != 1 || second[0].Value != "host-3" {
		t.Fatalf("arrays %v (cap %d) and %v", first, cap(first), second)
	}
	vals := make([]any, 4)
	for i := range vals {
		vals[i] = res.Objects[2+i].PropSet[0].Val
	}
	if vals[0] != int64(4294967296) || vals[2] != int64(4294967296) || vals[3] != int64(8589934592) {
		t.Errorf("values %v", vals)
	}
	box := func(v any) unsafe.Pointer { return (*[2]unsafe.Pointer)(unsafe.Pointer(&v))[1] }
	if box(vals[0]) != box(vals[1]) || box(vals[1]) == box(vals[3]) {
		t.Error("the same text was boxed twice, or different values shared a box")
	}
}
