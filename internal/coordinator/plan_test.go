package coordinator

import (
	"testing"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/workload"
)

func i32(v int32) *int32 { return &v }

func TestNewPlan(t *testing.T) {
	base := func(mut func(*v1alpha1.WorkloadSpec)) v1alpha1.WorkloadSpec {
		w := v1alpha1.WorkloadSpec{MessageSize: 100, ProducerRate: 100}
		workload.Default(&w)
		if mut != nil {
			mut(&w)
		}
		return w
	}
	tests := []struct {
		name                      string
		workers                   int
		topics                    []string
		w                         v1alpha1.WorkloadSpec
		wantProducerWorkers       []int
		wantConsumerWorkers       []int
		wantProducers, wantConsum int
		wantSubs                  int
	}{
		{"OMB split: half produce, half consume", 4, []string{"a", "b"}, base(func(w *v1alpha1.WorkloadSpec) { w.ProducersPerTopic = 2; w.ConsumerPerSubscription = 3 }),
			[]int{0, 1}, []int{2, 3}, 4, 6, 2},
		{"odd count gives the extra worker to consumers (as OMB)", 3, []string{"a"}, base(nil),
			[]int{0}, []int{1, 2}, 1, 1, 1},
		{"produce-only uses every worker to produce (OMB #405)", 4, []string{"a"}, base(func(w *v1alpha1.WorkloadSpec) { w.SubscriptionsPerTopic = i32(0); w.ProducersPerTopic = 4 }),
			[]int{0, 1, 2, 3}, nil, 4, 0, 0},
		{"one worker does both", 1, []string{"a"}, base(nil), []int{0}, []int{0}, 1, 1, 1},
		{"mixed adds catch-up subscriptions", 2, []string{"a", "b"}, base(func(w *v1alpha1.WorkloadSpec) {
			w.Mixed = &v1alpha1.MixedWorkload{CatchUpSubscriptionsPerTopic: 1}
		}), []int{0}, []int{1}, 2, 4, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewPlan(tt.workers, "run1", tt.topics, tt.w)
			if err != nil {
				t.Fatal(err)
			}
			if !equalInts(p.ProducerWorkers, tt.wantProducerWorkers) || !equalInts(p.ConsumerWorkers, tt.wantConsumerWorkers) {
				t.Errorf("roles: producers %v consumers %v, want %v and %v", p.ProducerWorkers, p.ConsumerWorkers, tt.wantProducerWorkers, tt.wantConsumerWorkers)
			}
			np, nc := 0, 0
			ids := map[uint32]bool{}
			for _, ps := range p.Producers {
				np += len(ps)
				for _, a := range ps {
					if ids[a.ID] {
						t.Errorf("producer id %d used twice", a.ID)
					}
					ids[a.ID] = true
				}
			}
			for _, cs := range p.Consumers {
				nc += len(cs)
			}
			if np != tt.wantProducers || nc != tt.wantConsum || len(p.Subscriptions) != tt.wantSubs {
				t.Errorf("got %d producers, %d consumers, %d subscriptions; want %d, %d, %d", np, nc, len(p.Subscriptions), tt.wantProducers, tt.wantConsum, tt.wantSubs)
			}
			names := map[string]bool{}
			for _, s := range p.Subscriptions {
				if names[s.Name] {
					t.Errorf("subscription name %s used twice: Kafka groups of two topics would merge", s.Name)
				}
				names[s.Name] = true
			}
			var total float64
			for _, r := range p.WorkerRates(1000) {
				total += r
			}
			if total < 999.999 || total > 1000.001 {
				t.Errorf("worker rates sum to %v, want 1000", total)
			}
		})
	}
	if _, err := NewPlan(0, "r", []string{"a"}, base(nil)); err == nil {
		t.Error("0 workers: want an error")
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
