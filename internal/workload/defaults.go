package workload

import (
	"github.com/streambench/streambench-operator/api/v1alpha1"

	"k8s.io/utils/ptr"
)

// The CRD defaults (+kubebuilder:default markers on v1alpha1.WorkloadSpec).
// TestCRDDefaultsMatch compares them with the generated CRD.
const (
	DefaultTopics                       int32   = 1
	DefaultPartitionsPerTopic           int32   = 1
	DefaultKeyDistributor                       = v1alpha1.KeyNone
	DefaultSubscriptionsPerTopic        int32   = 1
	DefaultConsumerPerSubscription      int32   = 1
	DefaultProducersPerTopic            int32   = 1
	DefaultProducerRate                 int64   = 0 // OMB: search the maximum rate
	DefaultBacklogDrainRatio            float64 = 1.0
	DefaultTestDurationMinutes          float64 = 5
	DefaultWarmupDurationMinutes        float64 = 1
	DefaultCatchUpSubscriptionsPerTopic int32   = 1
)

// Default fills every field the CRD defaults and that is unset, as the API
// server does before validation. Zero-valued non-pointer fields count as
// unset (Parse rejects an explicit zero where the CRD would). producerRate
// defaults to 0, its zero value, so it is never touched. Fields without a
// CRD default (messageSize, consumerBacklogSizeGB, randomBytesRatio,
// randomizedPayloadPoolSize, payloadFile) stay as they are.
func Default(w *v1alpha1.WorkloadSpec) {
	if w.Topics == 0 {
		w.Topics = DefaultTopics
	}
	if w.PartitionsPerTopic == 0 {
		w.PartitionsPerTopic = DefaultPartitionsPerTopic
	}
	if w.KeyDistributor == "" {
		w.KeyDistributor = DefaultKeyDistributor
	}
	if w.SubscriptionsPerTopic == nil {
		w.SubscriptionsPerTopic = ptr.To(DefaultSubscriptionsPerTopic)
	}
	if w.ConsumerPerSubscription == 0 {
		w.ConsumerPerSubscription = DefaultConsumerPerSubscription
	}
	if w.ProducersPerTopic == 0 {
		w.ProducersPerTopic = DefaultProducersPerTopic
	}
	if w.BacklogDrainRatio == nil {
		w.BacklogDrainRatio = ptr.To(DefaultBacklogDrainRatio)
	}
	if w.TestDurationMinutes == nil {
		w.TestDurationMinutes = ptr.To(DefaultTestDurationMinutes)
	}
	if w.WarmupDurationMinutes == nil {
		w.WarmupDurationMinutes = ptr.To(DefaultWarmupDurationMinutes)
	}
	if w.Mixed != nil && w.Mixed.CatchUpSubscriptionsPerTopic == 0 {
		w.Mixed.CatchUpSubscriptionsPerTopic = DefaultCatchUpSubscriptionsPerTopic
	}
}
