package faults

import (
	"testing"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

type stepWant struct {
	index  int
	kind   StepKind
	offset time.Duration
}

func TestSchedule(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name   string
		faults []v1alpha1.Fault
		want   []stepWant
	}{
		{"none", nil, nil},
		{"a pause is injected and cleared", []v1alpha1.Fault{pause("broker-1", 10*s, 5*s)},
			[]stepWant{{0, Inject, 10 * s}, {0, Clear, 15 * s}}},
		{"a kill has no clearing", []v1alpha1.Fault{kill("broker-2", 20*s)},
			[]stepWant{{0, Inject, 20 * s}}},
		{"by offset, not spec order", []v1alpha1.Fault{kill("broker-2", 60*s), pause("broker-1", 10*s, 70*s)},
			[]stepWant{{1, Inject, 10 * s}, {0, Inject, 60 * s}, {1, Clear, 80 * s}}},
		{"a clearing before an injection at the same time", []v1alpha1.Fault{pause("broker-1", 10*s, 10*s), pause("broker-1", 20*s, 5*s)},
			[]stepWant{{0, Inject, 10 * s}, {0, Clear, 20 * s}, {1, Inject, 20 * s}, {1, Clear, 25 * s}}},
		{"the same time in spec order", []v1alpha1.Fault{kill("broker-2", 30*s), kill("broker-1", 30*s)},
			[]stepWant{{0, Inject, 30 * s}, {1, Inject, 30 * s}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Schedule(tc.faults)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d steps %+v, want %d", len(got), got, len(tc.want))
			}
			for i, w := range tc.want {
				g := got[i]
				if g.Index != w.index || g.Kind != w.kind || g.Offset != w.offset {
					t.Errorf("step %d: got index %d %s at %s, want index %d %s at %s", i, g.Index, g.Kind, g.Offset, w.index, w.kind, w.offset)
				}
				if g.Fault != tc.faults[g.Index] {
					t.Errorf("step %d carries %+v, not spec.faults[%d]", i, g.Fault, g.Index)
				}
			}
		})
	}
}

func TestDue(t *testing.T) {
	s := time.Second
	steps := Schedule([]v1alpha1.Fault{pause("broker-1", 10*s, 5*s), kill("broker-2", 15*s)})
	// 10 s inject 0; 15 s clear 0; 15 s inject 1.
	for _, tc := range []struct {
		next    int
		elapsed time.Duration
		want    int
	}{
		{0, 0, 0},
		{0, 9 * s, 0},
		{0, 10 * s, 1},
		{0, 14 * s, 1},
		{1, 15 * s, 3},
		{0, time.Hour, 3},
		{3, time.Hour, 3},
	} {
		if got := Due(steps, tc.next, tc.elapsed); got != tc.want {
			t.Errorf("Due(next %d, %s) = %d, want %d", tc.next, tc.elapsed, got, tc.want)
		}
	}
}
