package pagecache

import (
	"strings"
	"testing"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

func TestMaxRequests(t *testing.T) {
	gb := 2.0
	backlog := v1alpha1.WorkloadSpec{ConsumerBacklogSizeGB: &gb}
	for _, tc := range []struct {
		name    string
		drop    bool
		wl      v1alpha1.WorkloadSpec
		repeats int32
		want    int32
	}{
		{name: "a backlog, once", drop: true, wl: backlog, want: 1},
		{name: "a backlog, repeated", drop: true, wl: backlog, repeats: 6, want: 6},
		{name: "a latency workload asks for none", drop: true, want: 0},
		{name: "without dropPageCache none", wl: backlog, repeats: 3, want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := &v1alpha1.BenchmarkRun{Spec: v1alpha1.BenchmarkRunSpec{Workload: tc.wl, Repeats: tc.repeats}}
			if tc.drop {
				run.Spec.Testbed = &v1alpha1.TestbedSpec{DropPageCache: true}
			}
			if got := MaxRequests(run); got != tc.want {
				t.Errorf("MaxRequests = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestRefusal(t *testing.T) {
	for _, tc := range []struct {
		name string
		seq  int32
		max  int32
		want string // "" answered
	}{
		{name: "the first of one", seq: 1, max: 1},
		{name: "the last of six", seq: 6, max: 6},
		{name: "one beyond", seq: 2, max: 1, want: "this run asks for 1 mid-run drops at most"},
		{name: "far beyond", seq: 1000, max: 6, want: "request 1000"},
		{name: "none asked", seq: 1, max: 0, want: "asks for no mid-run drop"},
		{name: "zero is the drop before the load, never a request", seq: 0, max: 1, want: "request 0"},
		{name: "negative", seq: -3, max: 1, want: "request -3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Refusal(Request{Seq: tc.seq}, tc.max)
			if tc.want == "" {
				if got != "" {
					t.Fatalf("refused: %s", got)
				}
				return
			}
			if !strings.Contains(got, tc.want) || !strings.Contains(got, "no privileged Job run") || !strings.Contains(got, KeyRequest) {
				t.Errorf("refusal %q does not say %q, that no Job ran, and which key", got, tc.want)
			}
		})
	}
}
