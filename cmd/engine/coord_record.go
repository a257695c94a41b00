package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"

	"github.com/rpengine/rpengine/engine"
	"github.com/rpengine/rpengine/engine/placement"
	"github.com/rpengine/rpengine/internal/coord"
)

// identityPrefix starts the trait that names a Placement: the shared
// ownership record is keyed by it, not by how the endpoint is spelt, so a
// host name for an IP, a trailing slash or another proxy keeps the record,
// and a really different Placement (which lacks the trait) starts clean.
// It is a custom trait on no provider: deleting it loses the record's key
// (docs/RECORD.md says how to recover).
const identityPrefix = "CUSTOM_RPENGINE_PLACEMENT_"

// traitLister is what the identity needs of a Placement client.
type traitLister interface {
	TraitsStartingWith(ctx context.Context, prefix string) ([]string, error)
	EnsureTrait(ctx context.Context, name string) error
}

// placementIdentity returns the identity the fleet's record is kept
// under: the one recorded in etcd while this Placement has its trait;
// else this Placement's own (minted once if it has none), recorded in
// its place. Every engine of the fleet ends with the same.
func placementIdentity(ctx context.Context, c identityRecord, pc traitLister, log *slog.Logger) (string, error) {
	recorded, rev, err := c.RecordedPlacement(ctx)
	if err != nil {
		return "", err
	}
	if recorded != "" {
		have, err := pc.TraitsStartingWith(ctx, recorded)
		if err != nil {
			return "", err
		}
		if len(have) > 0 && have[0] == recorded {
			return recorded, nil
		}
	}
	id, err := ownIdentity(ctx, pc)
	if err != nil {
		return "", err
	}
	if recorded != "" {
		log.Warn("this Placement is not the one the fleet's ownership record belongs to: starting with its own record",
			"recorded", recorded, "this", id)
	}
	return c.RecordPlacement(ctx, id, rev)
}

// ownIdentity is the Placement's identity trait, created if it has none.
// Two Placements never share one; should two engines mint at once, the
// first recorded in etcd wins and the other trait stays unused.
func ownIdentity(ctx context.Context, pc traitLister) (string, error) {
	have, err := pc.TraitsStartingWith(ctx, identityPrefix)
	if err != nil {
		return "", err
	}
	if len(have) > 0 {
		return have[0], nil
	}
	b := make([]byte, 10)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	id := identityPrefix + strings.ToUpper(hex.EncodeToString(b))
	if err := pc.EnsureTrait(ctx, id); err != nil {
		return "", fmt.Errorf("create the Placement identity trait: %w", err)
	}
	return id, nil
}

// shareRecord hands the engine the record store for this cycle's
// assignment: written under its lease, read again when units were acquired.
func (co *coordinator) shareRecord(ctx context.Context, eng *engine.Engine, pc *placement.Client, a coord.Assignment) error {
	if co.ident == "" || co.identFor != pc {
		id, err := placementIdentity(ctx, co.c, pc, co.log)
		if err != nil {
			return fmt.Errorf("placement identity: %w", err)
		}
		if co.ident != id {
			co.log.Info("ownership record shared", "backend", co.cfg.Coord.Backend, "placement", id, "key", coord.RecordPrefix(co.cfg.Coord.Prefix, id))
		}
		co.ident, co.identFor = id, pc
		co.reload = true // another Placement, or the first cycle: read it all
	}
	eng.ShareRecord(co.c.Store(a, co.ident), co.reload || len(a.Acquired) > 0)
	co.reload = false
	return nil
}

var _ traitLister = (*placement.Client)(nil)
