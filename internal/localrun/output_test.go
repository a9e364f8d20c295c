package localrun

import (
	"testing"

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
