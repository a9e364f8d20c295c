package outcome

import (
	"testing"

	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/brokerres"
	"github.com/streambench/streambench-operator/internal/results"
)

func TestRequests(t *testing.T) {
	env := func(c string, n int32, cpu, mem string) v1alpha1.ComponentEnvelope {
		return v1alpha1.ComponentEnvelope{Component: c, Replicas: n, CPURequest: cpu, MemoryRequest: mem}
	}
	for _, c := range []struct {
		name      string
		cs        []v1alpha1.ComponentEnvelope
		cores, gi float64
	}{
		// The metadata store's use is not measured, so its request is not
		// counted either: 3 × 2 + 3 × 0.5 cores, 3 × 8 + 3 × 4 GiB.
		{"pulsar", []v1alpha1.ComponentEnvelope{env("metadataStore", 3, "1", "2Gi"), env("bookie", 3, "500m", "4Gi"), env("broker", 3, "2", "8Gi")}, 7.5, 36},
		{"a broker without a CPU request", []v1alpha1.ComponentEnvelope{env("broker", 3, "", "8Gi")}, 0, 24},
		{"a request that does not parse", []v1alpha1.ComponentEnvelope{env("broker", 1, "two", "1Gi")}, 0, 1},
		{"none", nil, 0, 0},
	} {
		cores, gi := requests(c.cs)
		if cores != c.cores || gi != c.gi {
			t.Errorf("%s: %g cores, %g GiB; want %g, %g", c.name, cores, gi, c.cores, c.gi)
		}
	}
}

func TestCostInputAndRepeats(t *testing.T) {
	s := &results.Summary{System: v1alpha1.SystemPulsar,
		Workload:   v1alpha1.WorkloadSpec{MessageSize: 1000, ProducerRate: 5000},
		Durability: &v1alpha1.EffectiveDurability{Pulsar: &v1alpha1.PulsarDurability{EnsembleSize: 3, WriteQuorum: 3, AckQuorum: 2}},
		Testbed:    &v1alpha1.Testbed{Scope: v1alpha1.TestbedLocalHost}}
	s.Results.PublishMBPerSec = 4.9
	in := CostInput(s)
	if in.Replicas != 3 || in.TargetMBPerSec != 5 || !in.OneMachine || in.RequestedCores != 0 || in.PublishMBPerSec != 4.9 {
		t.Errorf("cost input %+v", in)
	}

	rep := func(cores float64, bound bool) *results.Summary {
		return &results.Summary{BrokerResources: &brokerres.Report{Source: "proc", Host: &brokerres.Host{CPUBound: bound},
			Total: v1alpha1.BrokerResources{CPUCores: ptr.To(cores)}}}
	}
	// The median of 1, 3 and 2 cores is 2; a repeat the host bound makes
	// the aggregate's host a bound one; a repeat without results is
	// passed over.
	r := repeatsResources([]*results.Summary{rep(1, false), nil, rep(3, true), rep(2, false)})
	if r == nil || *r.Total.CPUCores != 2 || r.Total.MemoryGiB != nil || !r.Host.CPUBound {
		t.Errorf("repeats' resources %+v", r)
	}
	if repeatsResources([]*results.Summary{{}, nil}) != nil {
		t.Error("repeats without resources give some")
	}
}
