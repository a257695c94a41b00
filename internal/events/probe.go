package events

// Watermark is what the last probe of recently changed nodes saw: each
// node's change stamp, as the source gave it. Stamps are compared for
// equality only, never ordered: the source's clock is its own.
type Watermark struct {
	seen   map[string]string
	primed bool
}

// Changed takes a probe's answer (uuids newest first, stamps[i] that of
// uuids[i], at most limit) and returns the uuids whose stamp is new since
// the previous probe. overflow says every one of a full answer is new:
// more nodes may have changed than the probe can see, so a full cycle
// must judge. The first probe only sets the watermark (a full cycle
// covers what came before it).
func (w *Watermark) Changed(uuids, stamps []string, limit int) (changed []string, overflow bool) {
	next := make(map[string]string, len(uuids))
	for i, u := range uuids {
		next[u] = stamps[i]
		if old, ok := w.seen[u]; w.primed && (!ok || old != stamps[i]) {
			changed = append(changed, u)
		}
	}
	overflow = w.primed && len(uuids) >= limit && len(changed) == len(uuids)
	w.seen, w.primed = next, true
	return changed, overflow
}
