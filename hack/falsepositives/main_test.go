package main

import (
	"reflect"
	"testing"
)

func TestTrials(t *testing.T) {
	for _, tc := range []struct {
		name string
		n, k int
		want []block
	}{
		{"one block of 5 against 5, A B B A A B B A A B", 10, 5, []block{{a: []int{0, 3, 4, 7, 8}, b: []int{1, 2, 5, 6, 9}}}},
		{"the remainder left out", 13, 3, []block{{a: []int{0, 3, 4}, b: []int{1, 2, 5}}, {a: []int{6, 9, 10}, b: []int{7, 8, 11}}}},
		{"too few for a trial", 9, 5, nil},
	} {
		if got := trials(tc.n, tc.k); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: trials(%d, %d) = %v, want %v", tc.name, tc.n, tc.k, got, tc.want)
		}
	}
}

// The bound printed beside the rate is the test's exact coverage: 5
// against 5 reach 96.8 %, so at most 3.2 % of one configuration's tests
// may say different.
func TestCoverage(t *testing.T) {
	if c := coverage(5); c < 0.967 || c > 0.969 {
		t.Errorf("coverage(5) = %v, want 0.968", c)
	}
}
