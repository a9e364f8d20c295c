package coordinator

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/stats"
)

// runCase runs one workload through the real protocol and checks it; it
// returns the result for workload-specific assertions.
func runCase(t *testing.T, urls []string, cfg driver.Config, wl v1alpha1.WorkloadSpec, o Options) *Result {
	t.Helper()
	cfg.RunID = fmt.Sprintf("%s%d", cfg.RunID, time.Now().UnixNano()%1e9)
	o.Workers, o.Driver, o.Workload = urls, cfg, wl
	if o.SnapshotInterval == 0 {
		o.SnapshotInterval = 2 * time.Second
	}
	if o.CatchUpTimeout == 0 {
		o.CatchUpTimeout = 60 * time.Second
	}
	o.Logf = t.Logf
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	res, err := Run(ctx, o)
	if err != nil {
		t.Fatalf("run %s: %v", cfg.RunID, err)
	}
	wantConsumers := len(res.Plan.Subscriptions) > 0
	checkRun(t, res, wantConsumers)
	checkFiles(t, res, cfg)
	return res
}

// stopWhileCreatingTopics stops a run as its first topic appears (a
// BenchmarkRun deleted then, as test/e2e does): the coordinator's call that
// creates the topics is cut off halfway, and its cleanup must still delete
// every topic, those made after the cut too. listed lists the run's topics
// on the broker. Topics are made one by one, so with eight the cut comes
// while some are still to be made.
func stopWhileCreatingTopics(t *testing.T, urls []string, cfg driver.Config, runID string, listed func() []string) {
	t.Helper()
	wl := fixedRateWorkload()
	wl.Topics = 8
	cfg.RunID = runID
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, Options{Workers: urls, Driver: cfg, Workload: wl, SnapshotInterval: 2 * time.Second, Logf: t.Logf})
		done <- err
	}()
	appeared := time.Now().Add(time.Minute)
	for len(listed()) == 0 {
		if time.Now().After(appeared) {
			t.Fatal("no topic of the run appeared in a minute")
		}
		time.Sleep(5 * time.Millisecond)
	}
	stop()
	err := <-done
	if err == nil || !strings.Contains(err.Error(), "creating topics") {
		t.Fatalf("the run was stopped while it created its topics, so its error should say so; got %v", err)
	}
	t.Logf("stopped while creating topics: %v", err)
	if strings.Contains(err.Error(), "deleting") {
		t.Errorf("the cleanup could not delete what the run made: %v", err)
	}
	if left := listed(); len(left) > 0 {
		t.Errorf("topics left behind by a run stopped while creating them: %v", left)
	}
}

// checkFiles writes the summary and the OMB-compatible result and parses
// them back.
func checkFiles(t *testing.T, res *Result, cfg driver.Config) {
	t.Helper()
	dir := t.TempDir()
	in := res.ResultsInput(cfg.RunID, "", &cfg.Durability)
	sum, err := WriteFiles(dir, in)
	if err != nil {
		t.Fatalf("writing results: %v", err)
	}
	if sum.Results.PublishRateMsgPerSec <= 0 || sum.Results.PublishLatencyMs.P99 <= 0 {
		t.Errorf("summary headline %+v", sum.Results)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "omb-result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var omb map[string]any
	if err := json.Unmarshal(raw, &omb); err != nil {
		t.Fatalf("omb-result.json does not parse: %v", err)
	}
	for _, k := range []string{"publishRate", "consumeRate", "publishLatency99pct", "aggregatedPublishLatency99pct", "aggregatedPublishLatencyQuantiles", "messageSize"} {
		if _, ok := omb[k]; !ok {
			t.Errorf("omb-result.json lacks %q", k)
		}
	}
	if rates, _ := omb["publishRate"].([]any); len(rates) == 0 {
		t.Errorf("omb-result.json publishRate series is empty")
	}
}

func level2(t *testing.T, sys v1alpha1.System) v1alpha1.EffectiveDurability {
	t.Helper()
	l := v1alpha1.Level2
	eff, err := durability.Translate(sys, v1alpha1.DurabilitySpec{Level: &l})
	if err != nil {
		t.Fatal(err)
	}
	return eff
}

// The workloads every system runs (small, to keep the package near six
// minutes on two cores).
func fixedRateWorkload() v1alpha1.WorkloadSpec {
	return shortWorkload("fixed", 2000, 10)
}

// The backlog workloads measure 10 s after the drain, not 4: in a cold run
// at a load of 18 (every broker package ran twice in it, the second time
// through a make -n, see internal/cicheck), Pulsar's standalone
// acknowledged nothing for about 5 s after draining the backlog (the sends
// of the whole 4 s measured phase were acknowledged in the cool-down, p50
// 4.5 s), and the run reported a measured rate of 0, as it should; 10 s
// leaves a measurement beside such a pause.
func backlogWorkload() v1alpha1.WorkloadSpec {
	w := shortWorkload("backlog", 4000, 10)
	w.ConsumerBacklogSizeGB = f64(0.02)
	return w
}

func mixedWorkload() v1alpha1.WorkloadSpec {
	w := backlogWorkload()
	w.Name = "mixed"
	w.Mixed = &v1alpha1.MixedWorkload{CatchUpSubscriptionsPerTopic: 1}
	return w
}

func checkBacklog(t *testing.T, res *Result, mixed bool) {
	t.Helper()
	b := res.Backlog
	if b == nil || b.BuiltBytes < b.TargetBytes || b.DrainSeconds <= 0 || b.DrainedBytes <= 0 {
		t.Fatalf("backlog result %+v: want built >= target and a measured drain", b)
	}
	d := stats.Aggregate(res.Snapshots, stats.PhaseDrain)
	if d.Producer.PublishLatency.Count() == 0 {
		t.Errorf("no publish latency recorded during the drain")
	}
	build := stats.Aggregate(res.Snapshots, stats.PhaseBacklogBuild)
	if mixed {
		// The tailing subscription kept reading while the backlog built;
		// the catch-up one read nothing.
		if build.Consumer.Totals(false).Received == 0 {
			t.Errorf("mixed: tailing subscription received nothing while the backlog built")
		}
		if n := build.Consumer.Totals(true).Received; n > build.Producer.Acked/10 {
			t.Errorf("mixed: catch-up subscription received %d while paused", n)
		}
		if d.Consumer.Totals(true).Received == 0 {
			t.Errorf("mixed: catch-up subscription read nothing during the drain")
		}
	} else if n := build.Consumer.Total().Received; n > build.Producer.Acked/10 {
		t.Errorf("backlog: consumers received %d of %d while paused", n, build.Producer.Acked)
	}
}
