package bench

import (
	"fmt"
	"io"
	"strings"
)

// Series is one line of a plot: median providers per second at each
// concurrency of the curve.
type Series struct {
	Name, Color string
	Dashed      bool
	Points      []CurvePoint
	Bare        bool // plot the bare client's rates instead of the engine's
}

// PlotSVG draws rate against concurrency (evenly spaced, as the
// concurrencies double) for every series, by hand: no dependency.
func PlotSVG(w io.Writer, title string, series []Series) {
	const W, H, left, right, top, bottom = 680, 360, 60, 200, 30, 40
	var concs []int
	ymax := 1.0
	for _, s := range series {
		for i, p := range s.Points {
			if i >= len(concs) {
				concs = append(concs, p.Concurrency)
			}
			ymax = max(ymax, SpreadOf(s.rates(p)).Max)
		}
	}
	ymax = niceCeil(ymax)
	pw, ph := float64(W-left-right), float64(H-top-bottom)
	x := func(i int) float64 { return left + pw*float64(i)/float64(max(1, len(concs)-1)) }
	y := func(v float64) float64 { return top + ph*(1-v/ymax) }
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", W, H)
	fmt.Fprintf(w, `<rect width="%d" height="%d" fill="white"/><text x="%d" y="18" font-size="14">%s</text>`+"\n", W, H, left, title)
	for i := 0; i <= 5; i++ {
		v := ymax * float64(i) / 5
		fmt.Fprintf(w, `<line x1="%d" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end">%.0f</text>`+"\n",
			left, left+pw, y(v), y(v), left-6, y(v)+4, v)
	}
	for i, c := range concs {
		fmt.Fprintf(w, `<text x="%.1f" y="%d" text-anchor="middle">%d</text>`+"\n", x(i), H-bottom+16, c)
	}
	fmt.Fprintf(w, `<text x="%.0f" y="%d" text-anchor="middle">engine.concurrency (bare client: same number of connections)</text>`+"\n", left+pw/2, H-6)
	fmt.Fprintf(w, `<text transform="translate(14 %.0f) rotate(-90)" text-anchor="middle">providers created / s (median)</text>`+"\n", top+ph/2)
	for k, s := range series {
		var pts []string
		for i, p := range s.Points {
			sp := SpreadOf(s.rates(p))
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(sp.Med)))
			// the spread of rounds as a vertical bar
			fmt.Fprintf(w, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s"/>`+"\n", x(i), x(i), y(sp.Min), y(sp.Max), s.Color)
		}
		dash := ""
		if s.Dashed {
			dash = ` stroke-dasharray="5 4"`
		}
		fmt.Fprintf(w, `<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`+"\n", s.Color, dash, strings.Join(pts, " "))
		ly := top + 16*k
		fmt.Fprintf(w, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2"%s/><text x="%d" y="%d">%s</text>`+"\n",
			W-right+10, W-right+30, ly, ly, s.Color, dash, W-right+34, ly+4, s.Name)
	}
	fmt.Fprintln(w, "</svg>")
}

func (s Series) rates(p CurvePoint) []float64 {
	if s.Bare {
		return p.Bare
	}
	return p.Engine
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	p := 1.0
	for p*10 <= v {
		p *= 10
	}
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}
