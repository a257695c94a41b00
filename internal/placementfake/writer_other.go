package placementfake

import "maps"

// More out-of-band writers, for a second service (nova-compute) writing
// the same providers: they bump the generation like a real write.

// SetReserved sets one inventory record's reserved value.
func (s *Server) SetReserved(uuid, class string, reserved int64) error {
	return s.change(uuid, func(p *provider) error {
		inv, ok := p.inv[class]
		if !ok {
			return ErrNoProvider
		}
		inv.Reserved = reserved
		p.inv[class] = inv
		return nil
	})
}

// RemoveTrait removes a trait from a provider.
func (s *Server) RemoveTrait(uuid, trait string) error {
	return s.change(uuid, func(p *provider) error {
		delete(p.traits, trait)
		return nil
	})
}

// DropConsumer deletes a consumer's allocations, as `nova-manage placement
// audit --delete` does to consumers it does not know; false if none.
func (s *Server) DropConsumer(uuid string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	con := s.st.consumers[uuid]
	if con == nil || len(con.allocs) == 0 {
		return false
	}
	s.st.dropConsumer(con)
	return true
}

// ConsumerState is a snapshot of one consumer, for assertions.
type ConsumerState struct {
	Project, User, Type string
	Allocations         map[string]map[string]int64
}

// Consumer returns a snapshot of a consumer with allocations.
func (s *Server) Consumer(uuid string) (ConsumerState, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	con := s.st.consumers[uuid]
	if con == nil || len(con.allocs) == 0 {
		return ConsumerState{}, false
	}
	out := ConsumerState{Project: con.project, User: con.user, Type: con.kind, Allocations: map[string]map[string]int64{}}
	for rp, res := range con.allocs {
		out.Allocations[rp] = maps.Clone(res)
	}
	return out, true
}
