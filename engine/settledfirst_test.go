package engine

import (
	"reflect"
	"testing"
)

// The providers left to the workers keep their order, and the flips
// still start where the unsettled providers before them end.
func TestUnsettledKeepsTheOrderAndWhereTheFlipsStart(t *testing.T) {
	settled := []bool{true, false, true, false, false, true}
	cases := []struct {
		order       []int
		flips       int
		rest        []int
		flipsInRest int
	}{
		{nil, 6, []int{1, 3, 4}, 3},
		{[]int{5, 3, 0, 1, 4, 2}, 4, []int{3, 1, 4}, 2}, // flips: positions 4, 5 (indexes 4, 2)
		{[]int{0, 2, 5, 1, 3, 4}, 3, []int{1, 3, 4}, 0},
		{[]int{1, 3, 4, 0, 2, 5}, 6, []int{1, 3, 4}, 3},
	}
	for _, tc := range cases {
		rest, before := unsettled(settled, tc.order, tc.flips)
		if !reflect.DeepEqual(rest, tc.rest) || before != tc.flipsInRest {
			t.Errorf("order %v, flips from %d: rest %v, flips from %d; want %v, %d", tc.order, tc.flips, rest, before, tc.rest, tc.flipsInRest)
		}
	}
	if rest, _ := unsettled([]bool{true}, nil, 1); rest == nil {
		t.Error("all settled: nil, which the workers read as desired's own order")
	}
}
