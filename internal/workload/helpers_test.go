package workload

import (
	"math"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

func TestDurations(t *testing.T) {
	tests := []struct {
		name         string
		test, warmup *float64
		wantT, wantW time.Duration
	}{
		{"defaults when unset", nil, nil, 5 * time.Minute, time.Minute},
		{"whole minutes", ptr.To(15.0), ptr.To(2.0), 15 * time.Minute, 2 * time.Minute},
		{"fractions", ptr.To(0.5), ptr.To(0.25), 30 * time.Second, 15 * time.Second},
		{"no warm-up", ptr.To(1.0), ptr.To(0.0), time.Minute, 0},
		{"capped at the largest Duration", ptr.To(1e300), ptr.To(1.0), time.Duration(math.MaxInt64), time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := v1alpha1.WorkloadSpec{TestDurationMinutes: tt.test, WarmupDurationMinutes: tt.warmup}
			if got := TestDuration(w); got != tt.wantT {
				t.Errorf("TestDuration = %v, want %v", got, tt.wantT)
			}
			if got := WarmupDuration(w); got != tt.wantW {
				t.Errorf("WarmupDuration = %v, want %v", got, tt.wantW)
			}
		})
	}
}

func TestBacklog(t *testing.T) {
	tests := []struct {
		name      string
		gb        *float64
		rate      int64
		wantBytes int64
	}{
		{"unset", nil, 1000, 0},
		{"zero", ptr.To(0.0), 1000, 0},
		{"OMB's GB is a GiB (WorkloadGenerator: GB * 1024 * 1024 * 1024)", ptr.To(512.0), 1000, 512 << 30},
		{"one GiB, not 10^9 bytes", ptr.To(1.0), 1000, 1_073_741_824},
		{"fraction", ptr.To(0.5), 1000, 536_870_912},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := v1alpha1.WorkloadSpec{ConsumerBacklogSizeGB: tt.gb, ProducerRate: tt.rate}
			if got := BacklogBytes(w); got != tt.wantBytes {
				t.Errorf("BacklogBytes = %d, want %d", got, tt.wantBytes)
			}
			if got := IsBacklog(w); got != (tt.wantBytes > 0) {
				t.Errorf("IsBacklog = %t", got)
			}
		})
	}
	if r := BacklogDrainRatio(v1alpha1.WorkloadSpec{}); r != 1.0 {
		t.Errorf("BacklogDrainRatio default = %v, want 1", r)
	}
	if r := BacklogDrainRatio(v1alpha1.WorkloadSpec{BacklogDrainRatio: ptr.To(0.9)}); r != 0.9 {
		t.Errorf("BacklogDrainRatio = %v, want 0.9", r)
	}
}

func TestCounts(t *testing.T) {
	tests := []struct {
		name                                   string
		w                                      v1alpha1.WorkloadSpec
		partitions, producers, consumers, subs int
		catchUp                                int
		mixed, maxRate, produceOnly            bool
	}{
		{"unset counts use the defaults", v1alpha1.WorkloadSpec{}, 1, 1, 1, 1, 0, false, true, false},
		{"OMB 4p 4c", v1alpha1.WorkloadSpec{Topics: 1, PartitionsPerTopic: 100, ProducersPerTopic: 4,
			ConsumerPerSubscription: 4, SubscriptionsPerTopic: ptr.To[int32](1), ProducerRate: 200000},
			100, 4, 4, 1, 0, false, false, false},
		{"several topics and subscriptions", v1alpha1.WorkloadSpec{Topics: 3, PartitionsPerTopic: 6, ProducersPerTopic: 2,
			ConsumerPerSubscription: 2, SubscriptionsPerTopic: ptr.To[int32](2), ProducerRate: 1},
			18, 6, 12, 2, 0, false, false, false},
		{"produce only", v1alpha1.WorkloadSpec{Topics: 2, SubscriptionsPerTopic: ptr.To[int32](0), ProducerRate: 1},
			2, 2, 0, 0, 0, false, false, true},
		{"mixed adds catch-up consumers", v1alpha1.WorkloadSpec{Topics: 2, ConsumerPerSubscription: 3,
			SubscriptionsPerTopic: ptr.To[int32](1), Mixed: &v1alpha1.MixedWorkload{CatchUpSubscriptionsPerTopic: 2}, ProducerRate: 1},
			2, 2, 18, 1, 2, true, false, false},
		{"mixed with catch-up unset counts the default", v1alpha1.WorkloadSpec{SubscriptionsPerTopic: ptr.To[int32](0),
			Mixed: &v1alpha1.MixedWorkload{}, ProducerRate: 1},
			1, 1, 1, 0, 1, true, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := tt.w
			got := []any{TotalPartitions(w), TotalProducers(w), TotalConsumers(w), SubscriptionsPerTopic(w),
				CatchUpSubscriptionsPerTopic(w), IsMixed(w), IsMaxRate(w), IsProduceOnly(w)}
			want := []any{tt.partitions, tt.producers, tt.consumers, tt.subs, tt.catchUp, tt.mixed, tt.maxRate, tt.produceOnly}
			names := []string{"TotalPartitions", "TotalProducers", "TotalConsumers", "SubscriptionsPerTopic",
				"CatchUpSubscriptionsPerTopic", "IsMixed", "IsMaxRate", "IsProduceOnly"}
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("%s = %v, want %v", names[i], got[i], want[i])
				}
			}
		})
	}
}
