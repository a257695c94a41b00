package conformance

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// checkABI: the module loads without configuration: ABI version, every
// export with its signature, only imports the host provides.
func checkABI(ctx context.Context, s *suite) error {
	var err error
	s.info, err = wasmhost.Inspect(ctx, s.o.Path, s.o.Host)
	if err != nil {
		return err
	}
	imports := strings.Join(s.info.Imports, ", ")
	if imports == "" {
		imports = "none"
	}
	s.note = fmt.Sprintf("ABI v%d; host imports: %s", s.info.ABIVersion, imports)
	return nil
}

// checkDescribe: the plugin names itself, gives a version, lists only
// operations it exports and declares its services.
func checkDescribe(_ context.Context, s *suite) error {
	var bad []string
	if s.info.Name == "" || strings.HasSuffix(s.info.Name, ".wasm") {
		bad = append(bad, "no name (the host fell back to the file name)")
	}
	if s.info.Version == "" {
		bad = append(bad, "no version")
	}

	seen := map[string]bool{}
	for _, svc := range s.info.Services {
		if svc.Name == "" || seen[svc.Name] {
			bad = append(bad, fmt.Sprintf("service name %q empty or declared twice", cut(svc.Name)))
		}
		seen[svc.Name] = true
	}
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "; "))
	}
	services := "[" + serviceNames(s.info.Services) + "]"
	if s.info.Services == nil {
		services = "not declared (ABI §2: its calls are unchecked)"
	}
	s.note = fmt.Sprintf("%s %s; operations [%s]; services %s", cut(s.info.Name), cut(s.info.Version),
		strings.Join(s.info.Operations, " "), services)
	return nil
}

// checkConfigure: the given configuration is accepted and every declared
// service is granted (the engine's own load).
func checkConfigure(ctx context.Context, s *suite) error {
	p, err := wasmhost.Load(ctx, s.o.Path, s.o.Config, s.o.Host)
	if err != nil {
		return err
	}
	s.plugin = p
	s.note = fmt.Sprintf("accepted; declared services granted: [%s]", serviceNames(p.Info().Services))
	return nil
}

// unknownKey is a key no plugin has: its configuration must be refused
// with an error that names it.
const unknownKey = "rpengine_conformance_no_such_key"

// checkConfigErrors: a configuration with an unknown key, and one that
// is not a JSON object, are refused; the first error names the key.
func checkConfigErrors(ctx context.Context, s *suite) error {
	var bad []string
	withKey := addKey(s.o.Config, unknownKey)
	for _, c := range []struct {
		what   string
		config []byte
		names  string
	}{
		{"an unknown key", withKey, unknownKey},
		{"a JSON array", []byte(`[]`), ""},
	} {
		p, err := wasmhost.Load(ctx, s.o.Path, c.config, s.o.Host)
		switch {
		case err == nil:
			p.Close(ctx)
			bad = append(bad, c.what+" was accepted")
		case !wasmhost.IsKind(err, wasmhost.KindPlugin):
			bad = append(bad, fmt.Sprintf("%s: refused as %v, not as an in-band error", c.what, cut(err.Error())))
		case c.names != "" && !strings.Contains(err.Error(), c.names):
			bad = append(bad, fmt.Sprintf("%s: the error does not name it: %s", c.what, cut(err.Error())))
		}
	}
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "; "))
	}
	return nil
}

// addKey returns config (a JSON object, or {} when nil) with key added.
func addKey(config []byte, key string) []byte {
	m := map[string]any{}
	if len(config) > 0 {
		json.Unmarshal(config, &m)
	}
	m[key] = true
	out, _ := json.Marshal(m)
	return out
}

// checkListNodes: the listing is complete and every node is one the
// engine would write (the engine's own rules: uuid, class or resources,
// traits, no duplicates).
func checkListNodes(ctx context.Context, s *suite) error {
	err := s.timed("list_nodes", func() (err error) {
		s.nodes, err = s.plugin.ListNodes(ctx, hostabi.ListNodesRequest{})
		return err
	})
	if err != nil {
		return err
	}
	if err := s.timed("list_instances", func() (err error) {
		s.insts, err = s.plugin.ListInstances(ctx)
		return err
	}); err != nil {
		s.insts = nil
	}
	_, problems := engine.DesiredState(s.nodes, s.insts, engine.Policy{OwnerTrait: engine.OwnerTrait("conformance")})
	if len(problems) > 0 {
		msgs := make([]string, len(problems))
		for i, p := range problems {
			msgs[i] = p.String()
		}
		return fmt.Errorf("%d of %d nodes would be quarantined: %s", len(problems), len(s.nodes), examples(msgs))
	}
	if len(s.nodes) == 0 {
		s.note = "0 nodes: the shape of an empty listing only (give a --config with nodes)"
		return nil
	}
	s.note = fmt.Sprintf("%d nodes, complete", len(s.nodes))
	return nil
}

// checkListInstances: every instance has a uuid and a node uuid, and no
// instance is listed twice.
func checkListInstances(ctx context.Context, s *suite) error {
	if s.insts == nil {
		return s.timed("list_instances", func() (err error) {
			_, err = s.plugin.ListInstances(ctx)
			return err
		})
	}
	var bad []string
	seen := map[string]bool{}
	for _, in := range s.insts {
		switch {
		case !hostabi.ValidUUID(in.UUID):
			bad = append(bad, fmt.Sprintf("instance uuid %q is not a uuid", cut(in.UUID)))
		case !hostabi.ValidUUID(in.NodeUUID):
			bad = append(bad, fmt.Sprintf("instance %s: node_uuid %q is not a uuid", in.UUID, cut(in.NodeUUID)))
		case seen[in.UUID]:
			bad = append(bad, fmt.Sprintf("instance %s listed twice", in.UUID))
		}
		seen[in.UUID] = true
	}
	if len(bad) > 0 {
		return fmt.Errorf("%d bad of %d instances: %s", len(bad), len(s.insts), examples(bad))
	}
	s.note = fmt.Sprintf("%d instances", len(s.insts))
	return nil
}

// checkAgree: a second listing, with nothing changed at the source, is
// the same set of nodes with the same fields (order aside), and the same
// instances.
func checkAgree(ctx context.Context, s *suite) error {
	if s.nodes == nil {
		return skip("no first listing")
	}
	var nodes []hostabi.Node
	var insts []hostabi.Instance
	err := s.timed("list_nodes", func() (err error) {
		nodes, err = s.plugin.ListNodes(ctx, hostabi.ListNodesRequest{})
		return err
	})
	if err == nil {
		err = s.timed("list_instances", func() (err error) {
			insts, err = s.plugin.ListInstances(ctx)
			return err
		})
	}
	if err != nil {
		return fmt.Errorf("second listing: %w", err)
	}
	if d := diff(byUUID(s.nodes, func(n hostabi.Node) string { return n.UUID }),
		byUUID(nodes, func(n hostabi.Node) string { return n.UUID })); d != "" {
		return fmt.Errorf("nodes differ: %s", d)
	}
	if d := diff(byUUID(s.insts, func(i hostabi.Instance) string { return i.UUID }),
		byUUID(insts, func(i hostabi.Instance) string { return i.UUID })); d != "" {
		return fmt.Errorf("instances differ: %s", d)
	}
	return nil
}

// checkEncodings: offered JSON only and sent raw HTTP bodies, as older
// hosts do, the plugin lists the same nodes and instances as when offered
// the binary records and projected responses too (hostabi.EncodingRecords,
// hostabi.HTTPRequestHead.Project), whichever it uses.
func checkEncodings(ctx context.Context, s *suite) error {
	if s.nodes == nil {
		return skip("no first listing")
	}
	o := s.o.Host
	o.JSONAnswers, o.RawBodies = true, true
	p, err := wasmhost.Load(ctx, s.o.Path, s.o.Config, o)
	if err != nil {
		return fmt.Errorf("load offering JSON only: %w", err)
	}
	defer p.Close(ctx)
	nodes, err := p.ListNodes(ctx, hostabi.ListNodesRequest{})
	if err != nil {
		return fmt.Errorf("list_nodes offering JSON only: %w", err)
	}
	insts, err := p.ListInstances(ctx)
	if err != nil {
		return fmt.Errorf("list_instances offering JSON only: %w", err)
	}
	if d := diff(byUUID(s.nodes, func(n hostabi.Node) string { return n.UUID }),
		byUUID(nodes, func(n hostabi.Node) string { return n.UUID })); d != "" {
		return fmt.Errorf("nodes differ between encodings: %s", d)
	}
	if d := diff(byUUID(s.insts, func(i hostabi.Instance) string { return i.UUID }),
		byUUID(insts, func(i hostabi.Instance) string { return i.UUID })); d != "" {
		return fmt.Errorf("instances differ between encodings: %s", d)
	}
	return nil
}

// checkConfirmDeleted: a listed node is never reported deleted, a uuid
// no source has is never reported present, and the answer is exact (the
// host refuses uuids not asked).
func checkConfirmDeleted(ctx context.Context, s *suite) error {
	if !s.plugin.Supports(hostabi.ExportConfirmDeleted) {
		return skip("the plugin does not support confirm_deleted")
	}
	ghost := randomUUID()
	ask := []string{ghost}
	for _, n := range s.nodes[:min(len(s.nodes), 20)] {
		ask = append(ask, n.UUID)
	}
	var deleted, present []string
	err := s.timed("confirm_deleted", func() (err error) {
		deleted, present, err = s.plugin.ConfirmDeleted(ctx, ask)
		return err
	})
	if err != nil {
		return err
	}
	var bad []string
	for _, u := range deleted {
		if u != ghost {
			bad = append(bad, "listed node "+u+" reported deleted")
		}
	}
	if slices.Contains(present, ghost) {
		bad = append(bad, "random uuid "+ghost+" reported present")
	}
	if len(bad) > 0 {
		return errors.New(examples(bad))
	}
	s.note = fmt.Sprintf("asked %d: %d deleted, %d present", len(ask), len(deleted), len(present))
	return nil
}

// checkTime: the slowest call left at least Headroom of plugin.timeout.
func checkTime(_ context.Context, s *suite) error {
	limit := s.o.Host.CallTimeout
	if s.slowest > time.Duration(float64(limit)*Headroom) {
		return fmt.Errorf("slowest call %s took %s, over %.0f%% of plugin.timeout %s",
			s.slowestCall, s.slowest.Round(time.Millisecond), Headroom*100, limit)
	}
	s.note = fmt.Sprintf("slowest call %s %s of plugin.timeout %s", s.slowestCall, s.slowest.Round(time.Millisecond), limit)
	return nil
}

// checkServices: every service the plugin called is one it declared (the
// load already refused a declared service that is not granted).
func checkServices(_ context.Context, s *suite) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	declared := map[string]bool{}
	for _, svc := range s.info.Services {
		declared[svc.Name] = true
	}
	var undeclared, used []string
	for name, n := range s.used {
		used = append(used, fmt.Sprintf("%s (%d requests)", name, n))
		if !declared[name] {
			undeclared = append(undeclared, name)
		}
	}
	slices.Sort(undeclared)
	slices.Sort(used)
	if s.info.Services == nil {
		// ABI §2: a plugin that declares nothing (an older one) is not
		// checked, by the host or here.
		return skip("services not declared: unchecked, as the host does (ABI §2); used [%s]", strings.Join(used, ", "))
	}
	if len(undeclared) > 0 {
		return fmt.Errorf("called services it does not declare: %s", strings.Join(undeclared, ", "))
	}
	s.note = fmt.Sprintf("declared [%s], granted [%s], used [%s]", serviceNames(s.info.Services),
		strings.Join(sortedKeys(s.o.Host.Services), " "), strings.Join(used, ", "))
	return nil
}

func randomUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
