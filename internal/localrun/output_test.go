package localrun

import (
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/brokerres"
	"github.com/streambench/streambench-operator/internal/cost"
	"github.com/streambench/streambench-operator/internal/results"
)

func TestDescribeRateSearch(t *testing.T) {
	for _, tc := range []struct {
		name string
		rs   results.RateSearch
		want string
	}{
		{"held and kept", results.RateSearch{RateMsgPerSec: 15000, Converged: true, HoldSeconds: 35, MaxP99LatencyMs: 1000,
			Measured: &results.RateHeld{Held: true}},
			"15000 msg/s, held 35 s with corrected p99 within 1000 ms; the measured phase kept it"},
		{"not kept", results.RateSearch{RateMsgPerSec: 900, Converged: true, HoldSeconds: 60,
			Measured: &results.RateHeld{Reason: "published 500 of 900 msg/s"}},
			"900 msg/s, held 60 s; NOT KEPT in the measured phase: published 500 of 900 msg/s"},
		{"unconverged, no measured phase", results.RateSearch{RateMsgPerSec: 10},
			"10 msg/s (the search did not converge)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := describeRateSearch(tc.rs); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestDescribeCost(t *testing.T) {
	priced := cost.Compute(cost.Input{System: v1alpha1.SystemKafka, PublishMBPerSec: 10, Replicas: 3,
		Resources: &brokerres.Report{Source: brokerres.SourceProc, Total: v1alpha1.BrokerResources{CPUCores: ptr.To(0.5), MemoryGiB: ptr.To(1.0)},
			Host: &brokerres.Host{CPUBound: true, CPUVerdict: "the host's CPUs were 99 % busy"}}}, cost.Default(), true)
	got := DescribeCost(priced)
	for _, want := range []string{"20 MB/s per broker core used", " USD per hour", "prices gcp-n2-us-central1-on-demand, the default list prices",
		"no projection to 5000 MB/s: the host's CPUs bounded this run"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	unmeasured := cost.Compute(cost.Input{System: v1alpha1.SystemKafka, PublishMBPerSec: 10}, cost.Default(), true)
	if got := DescribeCost(unmeasured); !strings.HasPrefix(got, "– MB/s per broker core used; – USD per hour, – per TB") {
		t.Errorf("without resources: %q", got)
	}
}
