package outcome

import (
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/brokerres"
	"github.com/streambench/streambench-operator/internal/cost"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/significance"
)

// withCost fills s's cost (summary.json's cost, status.results.cost) under
// prices, nil meaning cost.Default(). s is the caller's copy.
func withCost(s *results.Summary, prices *cost.PriceModel) {
	withCostOf(s, s.BrokerResources, prices)
}

// withCostOf is withCost with the broker resources given (an aggregate's
// are the repeats').
func withCostOf(s *results.Summary, res *brokerres.Report, prices *cost.PriceModel) {
	m, isDefault := cost.Default(), true
	if prices != nil {
		m, isDefault = *prices, false
	}
	in := CostInput(s)
	in.Resources = res
	s.Cost = cost.Compute(in, m, isDefault)
	if s.Repeats != nil && res != nil {
		s.Cost.Notes = append(s.Cost.Notes, "a repeated run: each broker resource is the median over the repeats that measured it; each repeat's summary has its own cost")
	}
	s.Results.Cost = s.Cost.Summary()
}

// CostInput is what a summary measured that its cost is made of.
func CostInput(s *results.Summary) cost.Input {
	in := cost.Input{
		System:          s.System,
		PublishMBPerSec: s.Results.PublishMBPerSec,
		ConsumeMBPerSec: s.Results.ConsumeMBPerSec,
		TargetMBPerSec:  float64(s.Workload.ProducerRate) * float64(s.Workload.MessageSize) / 1e6,
		Resources:       s.BrokerResources,
		ResourcesWhy:    "no broker resources were measured (summary.json's notes say why)",
	}
	if d := s.Durability; d != nil {
		switch {
		case d.Kafka != nil:
			in.Replicas = d.Kafka.ReplicationFactor
		case d.Pulsar != nil:
			in.Replicas = d.Pulsar.WriteQuorum
		}
	}
	if tb := s.Testbed; tb != nil {
		in.OneMachine = tb.Scope == v1alpha1.TestbedLocalHost
		if tb.Topology != nil {
			in.RequestedCores, in.RequestedMemoryGiB = requests(tb.Topology.Components)
			if in.RequestedCores > 0 {
				in.RequestedFrom = "testbed.topology: the broker and bookie pods' requests (not the metadata store's, whose use is not measured)"
			}
		}
	}
	return in
}

// requests sums the CPU and memory the measured components (brokers and
// bookies) request over their pods; a component without a request, or
// with one that does not parse, makes that total 0 (not known).
func requests(cs []v1alpha1.ComponentEnvelope) (cores, memGiB float64) {
	cpuKnown, memKnown, any := true, true, false
	for _, c := range cs {
		if c.Component != "broker" && c.Component != "bookie" {
			continue
		}
		any = true
		cpu, err1 := resource.ParseQuantity(c.CPURequest)
		mem, err2 := resource.ParseQuantity(c.MemoryRequest)
		if c.CPURequest == "" || err1 != nil {
			cpuKnown = false
		} else {
			cores += cpu.AsApproximateFloat64() * float64(c.Replicas)
		}
		if c.MemoryRequest == "" || err2 != nil {
			memKnown = false
		} else {
			memGiB += mem.AsApproximateFloat64() * float64(c.Replicas) / (1 << 30)
		}
	}
	if !any || !cpuKnown {
		cores = 0
	}
	if !any || !memKnown {
		memGiB = 0
	}
	return cores, memGiB
}

// repeatsResources are a repeated run's broker resources for its
// aggregate's cost: each figure the median over the repeats that measured
// it, and the host of a repeat the host's CPUs bounded, if any did (its
// projection is refused then, as that repeat's is). Nil when no repeat
// measured any.
func repeatsResources(repeats []*results.Summary) *brokerres.Report {
	var with []*brokerres.Report
	for _, s := range repeats {
		if s != nil && s.BrokerResources != nil {
			with = append(with, s.BrokerResources)
		}
	}
	if len(with) == 0 {
		return nil
	}
	first := with[0]
	r := &brokerres.Report{Source: first.Source, Seconds: first.Seconds, Host: first.Host}
	r.Total = v1alpha1.BrokerResources{Source: first.Total.Source, Seconds: first.Total.Seconds, Brokers: first.Total.Brokers}
	median := func(get func(t *v1alpha1.BrokerResources) *float64) *float64 {
		var vs []float64
		for _, w := range with {
			if v := get(&w.Total); v != nil {
				vs = append(vs, *v)
			}
		}
		if len(vs) == 0 {
			return nil
		}
		m := significance.Median(vs)
		return &m
	}
	r.Total.CPUCores = median(func(t *v1alpha1.BrokerResources) *float64 { return t.CPUCores })
	r.Total.MemoryGiB = median(func(t *v1alpha1.BrokerResources) *float64 { return t.MemoryGiB })
	r.Total.DiskWriteMBPerSec = median(func(t *v1alpha1.BrokerResources) *float64 { return t.DiskWriteMBPerSec })
	r.Total.NetworkInMBPerSec = median(func(t *v1alpha1.BrokerResources) *float64 { return t.NetworkInMBPerSec })
	r.Total.NetworkOutMBPerSec = median(func(t *v1alpha1.BrokerResources) *float64 { return t.NetworkOutMBPerSec })
	for _, w := range with {
		if w.Host != nil && w.Host.CPUBound {
			r.Host = w.Host
			break
		}
	}
	return r
}

// CostOfRepeats prices a repeated run's aggregate (results.Aggregate,
// which leaves the cost out) as Finish does: from the repeats' median
// resources, under the model the repeats were priced by (nil when none
// was: nothing is priced). A suite's repeated cells are folded this way.
func CostOfRepeats(agg *results.Summary, repeats []*results.Summary) {
	for _, r := range repeats {
		if r != nil && r.Cost != nil {
			m := r.Cost.Model
			withCostOf(agg, repeatsResources(repeats), &m.PriceModel)
			agg.Cost.Model.Default = m.Default
			return
		}
	}
}
