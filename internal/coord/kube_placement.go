package coord

import (
	"context"
	"errors"
	"fmt"
	"net/http"
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
