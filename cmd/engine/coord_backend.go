package main

import (
	"context"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/internal/config"
	"github.com/rpengine/rpengine/internal/coord"
)

// membership is what the daemon needs of a coordination backend: etcd
// (coord.Coordinator) or Kubernetes (coord.KubeCoordinator).
type membership interface {
	identityRecord
	Sync(ctx context.Context) (coord.Assignment, error)
	Fence(parent context.Context, a coord.Assignment) (context.Context, context.CancelFunc)
	Watch(ctx context.Context, changed func())
	Close()
	// Store is the shared ownership record of placement, written under a.
	Store(a coord.Assignment, placement string) engine.RecordStore
	// Requests is how many requests the member sent to its backend.
	Requests() int64
}

// identityRecord keeps the identity of the fleet's Placement.
type identityRecord interface {
	RecordedPlacement(ctx context.Context) (id string, rev int64, err error)
	RecordPlacement(ctx context.Context, id string, rev int64) (string, error)
}

// join registers through the configured backend.
func join(ctx context.Context, cfg *config.Config, cc coord.Config) (membership, error) {
	if cfg.Coord.Backend == config.BackendKubernetes {
		k, err := coord.NewKube(ctx, cc, coord.KubeAccess{Kubeconfig: cfg.Coord.Kubeconfig, Namespace: cfg.Coord.Namespace})
		if err != nil {
			return nil, err
		}
		return kubeMembership{k}, nil
	}
	c, err := coord.New(ctx, cc)
	if err != nil {
		return nil, err
	}
	return etcdMembership{c}, nil
}

type etcdMembership struct{ *coord.Coordinator }

func (m etcdMembership) Store(a coord.Assignment, placement string) engine.RecordStore {
	return m.Records(a, placement)
}

type kubeMembership struct{ *coord.KubeCoordinator }

func (m kubeMembership) Store(a coord.Assignment, placement string) engine.RecordStore {
	return m.Records(a, placement)
}

// sharedReader reads, without registering, what a plan needs: the units
// an engine holds and the fleet's shared record (coord.Reader,
// coord.KubeReader).
type sharedReader interface {
	Held(ctx context.Context, member string) ([]string, error)
	RecordedPlacement(ctx context.Context) (string, error)
	Close()
	// Store is the record of placement, read-only.
	Store(placement string) engine.RecordStore
}

// openReader connects to the configured backend to read.
func openReader(cfg *config.Config) (sharedReader, error) {
	if cfg.Coord.Backend == config.BackendKubernetes {
		r, err := coord.OpenKubeReader(coord.KubeAccess{Kubeconfig: cfg.Coord.Kubeconfig, Namespace: cfg.Coord.Namespace}, cfg.Coord.Prefix)
		if err != nil {
			return nil, err
		}
		return kubeReader{r}, nil
	}
	r, err := coord.OpenReader(cfg.Coord.Etcd, etcdAccess(cfg), cfg.Coord.Prefix)
	if err != nil {
		return nil, err
	}
	return etcdReader{r}, nil
}

type etcdReader struct{ *coord.Reader }

func (r etcdReader) Store(placement string) engine.RecordStore { return r.Records(placement) }

type kubeReader struct{ *coord.KubeReader }

func (r kubeReader) Store(placement string) engine.RecordStore { return r.Records(placement) }

// readStatus reads the fleet's members, claims and moves from the
// configured backend, without registering.
func readStatus(ctx context.Context, cfg *config.Config, div coord.Division) (coord.Status, error) {
	if cfg.Coord.Backend == config.BackendKubernetes {
		access := coord.KubeAccess{Kubeconfig: cfg.Coord.Kubeconfig, Namespace: cfg.Coord.Namespace}
		return coord.ReadKubeStatus(ctx, access, cfg.Coord.Prefix, div, recentMoves)
	}
	return coord.ReadStatus(ctx, cfg.Coord.Etcd, etcdAccess(cfg), cfg.Coord.Prefix, div, recentMoves)
}
