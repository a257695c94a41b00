package wasmhost

import (
	"context"
	"errors"
	"fmt"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/projection"
)

// Projected responses (ABI.md §6): a plugin that asks for it in the
// request head gets a 2xx JSON body as the projection's records instead
// of the body, so a listing's pages never cross into the guest. The gate
// projects in the engine process, where the body already is; the frame
// that crosses to the plugin host and into guest memory is about half a
// node page (hostabi/PROFILE-10k.md).

// requestedProjection reads the head's projection, if any, and the one
// to keep (Keep, within it), before any request is sent: a spec the host
// cannot run costs the service nothing. With RawBodies the gate ignores
// both, as an older host would.
func (g *gate) requestedProjection(h hostabi.HTTPRequestHead) (proj, keep *projection.Projection, err error) {
	if h.Project == nil || g.raw {
		return nil, nil, nil
	}
	p, err := projection.FromSpec(*h.Project)
	if err != nil {
		return nil, nil, fmt.Errorf("malformed request head: %w", err)
	}
	if h.Keep == nil {
		return &p, nil, nil
	}
	k, err := projection.FromSpec(*h.Keep)
	if err == nil {
		err = projection.SubsetOf(k, p)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("malformed request head: keep: %w", err)
	}
	return &p, &k, nil
}

// projectKeeping projects got by keep when the operation keeps
// projections (refs.go), keeps it, and answers proj's part of it with
// the number it was kept under (0: not kept, over the budget); else it
// projects by proj alone.
func (g *gate) projectKeeping(ctx context.Context, got []byte, proj, keep *projection.Projection) ([]byte, uint32, error) {
	k := g.keep.Load()
	if keep == nil || k == nil {
		frame, err := g.project(ctx, got, *proj)
		return frame, 0, err
	}
	full, err := g.project(ctx, got, *keep)
	if err != nil {
		return nil, 0, err
	}
	ref := k.add(full[headRoom:], *keep)
	part, err := projection.Subset(full[headRoom:], *keep, *proj, headRoom)
	return part, ref, err
}

// project turns the body in got (after headRoom bytes) into the frame of
// p, also after headRoom bytes. A body that is not JSON of p's shape is
// answered with the projection's error frame, which the guest reports as
// its decoding error; a frame over the body cap (max_http_response) and
// the call's end are refusals, like a body over the cap.
func (g *gate) project(ctx context.Context, got []byte, p projection.Projection) ([]byte, error) {
	lim := projection.Limits{MaxBytes: int(min(g.maxBody, 1<<31-1)), Headroom: headRoom,
		Canceled: func() bool { return ctx.Err() != nil }}
	frame, err := projection.HostProjectLimited(got[headRoom:], p, lim)
	var big *projection.TooLargeError
	switch {
	case errors.As(err, &big):
		return nil, fmt.Errorf("projected response body exceeds the %d-byte cap (max_http_response)", g.maxBody)
	case err != nil:
		return nil, g.describe(ctx, ctx.Err())
	}
	return frame, nil
}

// alignedHead pads a response head with spaces (JSON allows them after
// the value) so that the body starts 8-byte aligned in a frame that
// does: the guest then reads the projection's records in place.
func alignedHead(raw []byte) []byte {
	for (4+len(raw))%8 != 0 {
		raw = append(raw, ' ')
	}
	return raw
}
