package placementfake

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// ErrNoProvider is returned by the out-of-band helpers for an unknown uuid.
var ErrNoProvider = errors.New("placementfake: no such resource provider")

// The methods of this file act as "another writer": they change state the way a
// second Placement client would, without going through HTTP and without
// appearing in the request log. Each bump makes a new random generation.

// CreateProvider adds a provider, e.g. to seed a large fleet quickly.
func (s *Server) CreateProvider(uuid, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.providers[uuid] != nil || s.st.byName[name] != nil {
		return fmt.Errorf("placementfake: provider %s / %s already exists", uuid, name)
	}
	s.st.addProvider(uuid, name)
	return nil
}

// BumpGeneration changes a provider's generation and nothing else.
func (s *Server) BumpGeneration(uuid string) error {
	return s.change(uuid, func(*provider) error { return nil })
}

// AddTrait adds a trait to a provider, defining it first if needed.
func (s *Server) AddTrait(uuid, trait string) error {
	return s.change(uuid, func(p *provider) error {
		s.st.traits[trait] = true
		p.traits[trait] = true
		return nil
	})
}

// AddAggregate puts a provider into an aggregate.
func (s *Server) AddAggregate(uuid, aggregate string) error {
	return s.change(uuid, func(p *provider) error {
		p.aggs[aggregate] = true
		return nil
	})
}

// Allocate gives a new or existing consumer allocations against one
// provider, replacing the consumer's allocations like a scheduler would.
// Each class must have inventory there; capacity is not checked, so tests
// can build over-committed states.
func (s *Server) Allocate(consumerUUID, providerUUID string, resources map[string]int64) error {
	return s.AllocateAs(consumerUUID, "other-writer", "other-writer", providerUUID, resources)
}

// AllocateAs is Allocate by a new consumer of the given project and user,
// as a PUT /allocations would make it (the provider's generation moves).
func (s *Server) AllocateAs(consumerUUID, project, user, providerUUID string, resources map[string]int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.st.providers[providerUUID]
	if p == nil {
		return ErrNoProvider
	}
	for rc := range resources {
		if _, ok := p.inv[rc]; !ok {
			return fmt.Errorf("placementfake: provider %s has no %s inventory", providerUUID, rc)
		}
	}
	con := s.st.consumers[consumerUUID]
	if con == nil {
		con = &consumer{uuid: consumerUUID, project: project, user: user, kind: "INSTANCE",
			gen: s.st.newGen(-2), allocs: map[string]map[string]int64{}}
		s.st.consumers[consumerUUID] = con
	}
	s.st.setAllocations(con, map[string]map[string]int64{providerUUID: maps.Clone(resources)})
	return nil
}

// DeleteProvider removes a provider even if it has allocations (they go
// too), like an operator cleaning up behind the engine's back.
func (s *Server) DeleteProvider(uuid string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.st.providers[uuid]
	if p == nil {
		return ErrNoProvider
	}
	s.st.removeProvider(p)
	return nil
}

func (s *Server) change(uuid string, f func(*provider) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.st.providers[uuid]
	if p == nil {
		return ErrNoProvider
	}
	if err := f(p); err != nil {
		return err
	}
	s.st.bump(p)
	return nil
}

// ProviderState is a snapshot of one provider, for assertions.
type ProviderState struct {
	UUID        string
	Name        string
	Generation  int64
	Inventories map[string]Inventory
	Usages      map[string]int64
	Traits      []string // sorted
	Aggregates  []string // sorted
}

// Provider returns a snapshot of a provider.
func (s *Server) Provider(uuid string) (ProviderState, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.st.providers[uuid]
	if p == nil {
		return ProviderState{}, false
	}
	return ProviderState{
		UUID: p.uuid, Name: p.name, Generation: p.gen,
		Inventories: maps.Clone(p.inv), Usages: maps.Clone(p.usage),
		Traits: slices.Sorted(maps.Keys(p.traits)), Aggregates: slices.Sorted(maps.Keys(p.aggs)),
	}, true
}

// ProviderUUIDs lists the providers in creation order.
func (s *Server) ProviderUUIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps := slices.SortedFunc(maps.Values(s.st.providers), func(a, b *provider) int { return cmp.Compare(a.seq, b.seq) })
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.uuid
	}
	return out
}

// Out-of-band writers for a second service (nova-compute) writing the
// same providers: they bump the generation like a real write.

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
