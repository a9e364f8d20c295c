package history

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/internal/changepoint"
	"github.com/streambench/streambench-operator/internal/results"
)

// recorded is a real run's summary.json (the report's test data).
func recorded(t *testing.T, dir string) *results.Summary {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "report", "testdata", dir, results.KeySummary))
	if err != nil {
		t.Fatal(err)
	}
	var s results.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// nightly is n runs of a recorded summary, a day apart, each with its
// publish p99 scaled by p99(i) and its name and workload name changed
// (neither makes another configuration).
func nightly(t *testing.T, dir string, n int, p99 func(i int) float64) []Run {
	base := recorded(t, dir)
	t0 := time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)
	var runs []Run
	for i := range n {
		b, _ := json.Marshal(base)
		var s results.Summary
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		s.Run = fmt.Sprintf("%s-%02d", dir, i)
		s.Workload.Name = fmt.Sprintf("nightly-%d", i)
		s.Results.PublishLatencyMs.P99 = base.Results.PublishLatencyMs.P99 * p99(i)
		runs = append(runs, Run{Name: s.Run, Dir: s.Run, Start: t0.Add(time.Duration(i) * 24 * time.Hour), Summary: &s})
	}
	return runs
}

// wobble is a run-to-run spread of ±2 %, deterministic.
func wobble(i int) float64 { return 1 + 0.02*math.Sin(float64(i)*2.3) }

func TestGroupAndRegressions(t *testing.T) {
	// Kafka nightly: twelve runs, then a slowdown of 30 % from the
	// ninth; Pulsar: twelve steady runs. Listed out of order.
	kafka := nightly(t, "kafka-ack-all", 12, func(i int) float64 {
		if i >= 8 {
			return 1.3 * wobble(i)
		}
		return wobble(i)
	})
	pulsar := nightly(t, "pulsar-ack-2", 12, wobble)
	var all []Run
	for i := 11; i >= 0; i-- {
		all = append(all, pulsar[i], kafka[i])
	}
	series := Analyze(Group(all), changepoint.Options{})
	if len(series) != 2 {
		t.Fatalf("%d series, want one per configuration", len(series))
	}
	for _, s := range series {
		if len(s.Runs) != 12 || !s.Runs[0].Start.Before(s.Runs[11].Start) {
			t.Errorf("series %s: %d runs, not in the order they ran", s.Key, len(s.Runs))
		}
	}
	regs := Regressions(series, 0.05)
	if len(regs) != 1 {
		t.Fatalf("regressions %v, want the Kafka publish p99 alone", regs)
	}
	r := regs[0]
	if r.Figure != "publish p99" || r.Change.Run != 8 || math.Abs(r.Change.Relative-0.3) > 0.05 || r.Change.Low <= 0 {
		t.Errorf("regression %s: want publish p99 +30 %% from run 9, its interval above 0", r)
	}
	if !strings.Contains(r.String(), "from run 9 on") {
		t.Errorf("%s", r)
	}
	// A threshold above the change: no regression to fail on.
	if got := Regressions(series, 0.5); len(got) != 0 {
		t.Errorf("regressions over 50 %%: %v", got)
	}
	// A faster run is a change, not a regression.
	faster := Analyze(Group(nightly(t, "kafka-ack-all", 12, func(i int) float64 {
		if i >= 8 {
			return 0.7 * wobble(i)
		}
		return wobble(i)
	})), changepoint.Options{})
	if got := Regressions(faster, 0.05); len(got) != 0 {
		t.Errorf("a faster p99 is a regression: %v", got)
	}
	found := false
	for _, tr := range faster[0].Tracks {
		found = found || (tr.Figure.Name == "publish p99" && len(tr.Changes) == 1 && !tr.Changes[0].Worse)
	}
	if !found {
		t.Errorf("the faster p99's change point is not found, or is called worse")
	}
}

// A changed setting starts another series; a renamed run or workload
// does not.
func TestConfigKey(t *testing.T) {
	s := recorded(t, "kafka-ack-all")
	k := ConfigOf(s).Key()
	renamed := *s
	renamed.Run, renamed.Workload.Name = "other", "other"
	if ConfigOf(&renamed).Key() != k {
		t.Error("a renamed run is another configuration")
	}
	bigger := *s
	bigger.Workload.MessageSize *= 2
	if ConfigOf(&bigger).Key() == k {
		t.Error("a message twice the size is the same configuration")
	}
	d := *s.Durability
	d.AchievedLevel++
	weaker := *s
	weaker.Durability = &d
	if ConfigOf(&weaker).Key() == k {
		t.Error("another durability level is the same configuration")
	}
	if ConfigOf(recorded(t, "pulsar-ack-2")).Key() == k {
		t.Error("Pulsar and Kafka are one configuration")
	}
}
