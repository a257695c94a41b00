package engine

import (
	"context"

	"github.com/rpengine/rpengine/engine/placement"
)

// written tells the observers of one write Placement accepted, with the
// ids that name it in Placement's log: the id of its answer (answer
// recorded it) and the cycle's global request id. A plan's writes leave
// the generation as it was: they are no event.
func (c *cycle) written(ctx context.Context, uuid, name string, op Op, before, after placement.Generation, answer *placement.AnswerID) {
	if before == after {
		return
	}
	c.e.emit(ProviderWritten{Node: uuid, Name: name, Op: op, GenerationBefore: string(before), GenerationAfter: string(after),
		RequestID: answer.Last(), GlobalRequestID: placement.GlobalRequestID(ctx)})
}

// requestIDs are the log attributes naming the last answer in Placement's
// log, for the records of writes that are no ProviderWritten (holds).
func requestIDs(ctx context.Context, answer *placement.AnswerID) []any {
	return []any{"request_id", answer.Last(), "global_request_id", placement.GlobalRequestID(ctx)}
}
