package coord

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"
)

// RecordedPlacement returns the identity of the Placement the fleet's
// record belongs to ("" if none is recorded yet) and a revision to pass
// to RecordPlacement: 0 when none is recorded, else 1, the object's
// resourceVersion being kept here (it is opaque, not a number).
func (k *KubeCoordinator) RecordedPlacement(ctx context.Context) (id string, rev int64, err error) {
	var cm kubeConfigMap
	err = k.api.do(ctx, http.MethodGet, k.api.configMaps()+"/"+k.names.placement(), nil, &cm)
	switch {
	case errors.Is(err, errNotFound):
		k.ident = ""
		return "", 0, nil
	case err != nil:
		return "", 0, fmt.Errorf("kubernetes: read the Placement identity: %w", err)
	}
	k.ident = cm.Metadata.ResourceVersion
	return cm.Data["id"], 1, nil
}

// RecordPlacement records id in place of what RecordedPlacement read
// (rev 0: nothing) and returns the identity recorded afterwards: another
// engine's, if it recorded first.
func (k *KubeCoordinator) RecordPlacement(ctx context.Context, id string, rev int64) (string, error) {
	cm := kubeConfigMap{APIVersion: "v1", Kind: "ConfigMap", Data: map[string]string{"id": id},
		Metadata: objectMeta{Name: k.names.placement(), Labels: k.names.labels(rolePlacement)}}
	var err error
	if rev == 0 {
		err = k.api.do(ctx, http.MethodPost, k.api.configMaps(), cm, nil)
	} else {
		cm.Metadata.ResourceVersion = k.ident
		err = k.api.do(ctx, http.MethodPut, k.api.configMaps()+"/"+cm.Metadata.Name, cm, nil)
	}
	switch {
	case err == nil:
		return id, nil
	case !errors.Is(err, errConflict):
		return "", fmt.Errorf("kubernetes: record the Placement identity: %w", err)
	}
	now, _, err := k.RecordedPlacement(ctx)
	if err != nil {
		return "", err
	}
	if now == "" {
		return "", errors.New("kubernetes: the Placement identity changed under this engine and vanished: try again")
	}
	return now, nil
}

// KubeReader reads what the API server says of one engine without
// registering it, as Reader does with etcd: no Lease taken, nothing
// written, for a plan beside the engine's daemon.
type KubeReader struct{ k *KubeCoordinator }

// OpenKubeReader reaches the API server through access, for the fleet
// under prefix.
func OpenKubeReader(access KubeAccess, prefix string) (*KubeReader, error) {
	api, err := dialKube(access.Kubeconfig, access.Namespace, 4*time.Second)
	if err != nil {
		return nil, err
	}
	return &KubeReader{k: &KubeCoordinator{api: api, names: newKubeNames(prefix), obs: newObservations(),
		recs: recordCache{cache: map[string]kubeConfigMap{}}}}, nil
}

// Close releases idle connections.
func (r *KubeReader) Close() { r.k.api.hc.CloseIdleConnections() }

// Held lists the units member's claims hold now, sorted. A member seen
// for the first time counts as live.
func (r *KubeReader) Held(ctx context.Context, member string) ([]string, error) {
	v, err := r.k.readKube(ctx, nil)
	if err != nil {
		return nil, err
	}
	var out []string
	for u, cl := range v.claims {
		if cl.holder == member {
			out = append(out, u)
		}
	}
	slices.Sort(out)
	return out, nil
}

// RecordedPlacement is the identity of the Placement the fleet's record
// belongs to, "" if none is recorded yet.
func (r *KubeReader) RecordedPlacement(ctx context.Context) (string, error) {
	id, _, err := r.k.RecordedPlacement(ctx)
	return id, err
}

// Records is the record of placement, read-only: Store refuses any
// write (ErrRecordFenced), there being no Lease behind it.
func (r *KubeReader) Records(placement string) *KubeRecords {
	return &KubeRecords{k: r.k, placement: placement, recordCache: &r.k.recs}
}
