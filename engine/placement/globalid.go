package placement

import (
	"context"
	"crypto/rand"
	"fmt"
)

// globalIDKey carries a cycle's global request id in a context.
type globalIDKey struct{}

// NewGlobalRequestID is an OpenStack global request id, "req-<uuid>":
// one per cycle, sent with each of its requests so Placement's log and
// the engine's can be joined (oslo.middleware's request_id accepts it).
func NewGlobalRequestID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("req-%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// WithGlobalRequestID makes every Placement request made with ctx send
// id as X-OpenStack-Request-ID.
func WithGlobalRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, globalIDKey{}, id)
}

// GlobalRequestID is the id WithGlobalRequestID put in ctx, or "".
func GlobalRequestID(ctx context.Context) string {
	id, _ := ctx.Value(globalIDKey{}).(string)
	return id
}
