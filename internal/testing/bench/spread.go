package bench

import (
	"fmt"
	"slices"
)

// Spread is min, median and max of rounds.
type Spread struct{ Min, Med, Max float64 }

// SpreadOf summarises xs (rounds of one figure).
func SpreadOf(xs []float64) Spread {
	if len(xs) == 0 {
		return Spread{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 { // the mean of the two middle rounds, not the higher
		med = (s[len(s)/2-1] + med) / 2
	}
	return Spread{s[0], med, s[len(s)-1]}
}

// Format prints the spread with f (e.g. "%.0f"); one value when all agree.
func (s Spread) Format(f string) string {
	if s.Min == s.Max {
		return fmt.Sprintf(f, s.Med)
	}
	return fmt.Sprintf(f+" / "+f+" / "+f, s.Min, s.Med, s.Max)
}

// Ratio of medians, a/b, as "12.3×".
func Ratio(a, b Spread) string {
	if b.Med == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f×", a.Med/b.Med)
}
