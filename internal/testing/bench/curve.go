package bench

import (
	"context"
	"fmt"
)

// CurvePoint is the cold-start rate of the engine and of the bare client
// at one concurrency, in providers per second, one value per round.
type CurvePoint struct {
	Concurrency  int
	Engine, Bare []float64
	EngineReq    int64 // requests of the engine's last cold cycle
}

// ColdCurve creates n new providers with the engine and n with the bare
// client at each concurrency, rounds times, alternating which goes first
// (the database grows as it runs, and a shared machine's load drifts).
// Each run uses fresh uuids.
func ColdCurve(ctx context.Context, url string, n, rounds int, concs []int, salt uint32) ([]CurvePoint, error) {
	var out []CurvePoint
	for ci, c := range concs {
		p := CurvePoint{Concurrency: c}
		for r := range rounds {
			s := salt + uint32(1000*ci+2*r)
			eng := func() error {
				e, err := NewEngine(ctx, url, source(Fleet(n, s, "baremetal-gold")), c)
				if err != nil {
					return err
				}
				m := Measure(ctx, e)
				if len(m.Errors) > 0 {
					return fmt.Errorf("engine cold start at concurrency %d: %s", c, m.Errors[0])
				}
				p.Engine, p.EngineReq = append(p.Engine, float64(n)/m.Wall.Seconds()), m.Requests
				return nil
			}
			bare := func() error {
				d, err := BareCreate(ctx, url, UUIDs(Fleet(n, s+1)), "CUSTOM_RPENGINE_OWNER_BENCH", c)
				if err != nil {
					return fmt.Errorf("bare client at concurrency %d: %w", c, err)
				}
				p.Bare = append(p.Bare, float64(n)/d.Seconds())
				return nil
			}
			first, second := eng, bare
			if (r+ci)%2 == 1 { // alternate by round and by point: the load drifts
				first, second = bare, eng
			}
			if err := first(); err != nil {
				return out, err
			}
			if err := second(); err != nil {
				return out, err
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// CurveRows turns a curve into report rows: rates and the ratio at each
// concurrency.
func CurveRows(label string, n int, pts []CurvePoint) []Row {
	var rows []Row
	for _, p := range pts {
		e, b := SpreadOf(p.Engine), SpreadOf(p.Bare)
		ratios := make([]float64, len(p.Engine))
		for i := range p.Engine {
			ratios[i] = p.Engine[i] / p.Bare[i]
		}
		rt := SpreadOf(ratios)
		rows = append(rows, Row{
			Metric: fmt.Sprintf("cold start at concurrency %d, providers/s (min / median / max of %d rounds)", p.Concurrency, len(p.Engine)),
			Fleet:  fmt.Sprintf("%d (%s)", n, label),
			Value:  fmt.Sprintf("engine %s; bare %s; ratio %s", e.Format("%.1f"), b.Format("%.1f"), rt.Format("%.2f")),
			Goal:   "≥ 0.9", Met: verdict(rt.Med >= 0.9),
		})
	}
	return rows
}
