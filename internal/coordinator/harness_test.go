package coordinator

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/stats"
	"github.com/streambench/streambench-operator/internal/worker"
)

// startWorkers serves n in-process workers over real HTTP on loopback and
// stops them when the test ends.
func startWorkers(t *testing.T, n int, drivers map[v1alpha1.System]worker.DriverFactory) []string {
	t.Helper()
	var urls []string
	for i := 0; i < n; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		w := worker.New(worker.Options{Name: fmt.Sprintf("w%d", i), Drivers: drivers, FlushTimeout: 30 * time.Second})
		done := make(chan struct{})
		go func() { defer close(done); _ = worker.ServeListener(ctx, ln, w) }()
		t.Cleanup(func() { cancel(); <-done })
		urls = append(urls, "http://"+ln.Addr().String())
	}
	return urls
}

func f64(v float64) *float64 { return &v }

// shortWorkload is a small fixed-rate workload: 2 s warm-up, measure for
// measure seconds.
func shortWorkload(name string, rate int64, measure float64) v1alpha1.WorkloadSpec {
	return v1alpha1.WorkloadSpec{
		Name: name, Topics: 1, PartitionsPerTopic: 4, MessageSize: 1024,
		ProducersPerTopic: 2, ConsumerPerSubscription: 2, SubscriptionsPerTopic: i32(1),
		ProducerRate: rate, TestDurationMinutes: f64(measure / 60), WarmupDurationMinutes: f64(2.0 / 60),
	}
}

// checkRun asserts what every run must show: no acknowledged message lost
// or duplicated, non-zero rates and latencies in the measured phase.
func checkRun(t *testing.T, res *Result, wantConsumers bool) {
	t.Helper()
	acc := res.Accounting
	if acc.Acked == 0 || acc.Sent == 0 {
		t.Fatalf("nothing acknowledged: %+v", acc)
	}
	if acc.Failed != 0 {
		t.Errorf("%d sends failed", acc.Failed)
	}
	if wantConsumers {
		if acc.Lost != 0 || acc.NotConsumed != 0 || acc.Duplicates != 0 {
			t.Errorf("lost %d, not consumed %d, duplicates %d; want 0, 0 and 0 (%+v)", acc.Lost, acc.NotConsumed, acc.Duplicates, acc.Subscriptions)
		}
		for _, s := range acc.Subscriptions {
			if s.Unique != s.Expected {
				t.Errorf("subscription %s received %d distinct of %d acknowledged", s.Name, s.Unique, s.Expected)
			}
		}
	}
	m := stats.Aggregate(res.Snapshots, stats.PhaseMeasure)
	if m.Rate(m.Producer.Acked) <= 0 {
		t.Errorf("measured publish rate is 0")
	}
	if q := m.Producer.PublishLatency.Quantiles(); q.P50 <= 0 || q.P99 < q.P50 {
		t.Errorf("publish latency quantiles %+v", q)
	}
	if wantConsumers {
		if m.Rate(m.Consumer.Total().Received) <= 0 {
			t.Errorf("measured consume rate is 0")
		}
		if q := m.Consumer.EndToEnd.Quantiles(); q.P50 <= 0 || q.Count == 0 {
			t.Errorf("end-to-end quantiles %+v", q)
		}
	}
	if w := stats.Aggregate(res.Snapshots, stats.PhaseWarmup); w.Producer.Acked == 0 && res.Workload.WarmupDurationMinutes != nil && *res.Workload.WarmupDurationMinutes > 0 {
		t.Errorf("warm-up phase recorded nothing: phases are not labelled")
	}
	if b, err := json.Marshal(res); err != nil || len(b) == 0 {
		t.Errorf("result does not marshal: %v", err)
	}
}
