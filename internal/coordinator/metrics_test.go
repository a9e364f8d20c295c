package coordinator

import (
	"net/http/httptest"
	"testing"

	"github.com/streambench/streambench-operator/internal/metrics/metricstest"

	dto "github.com/prometheus/client_model/go"

	"github.com/streambench/streambench-operator/internal/metrics"
	"github.com/streambench/streambench-operator/internal/stats"
)

// checkMetrics scrapes the workers' /metrics after a run (they keep the
// run's figures until the next one): their counts over all workers are
// exactly the run's, labelled with its id; the publish latency histogram
// holds every acknowledged message. coll is fed by Options.OnSnapshot, as
// the coordinator command's /metrics is; its backlog is 0 after a run that
// lost nothing.
func checkMetrics(t *testing.T, workers []string, res *Result, coll *metrics.Collector) {
	t.Helper()
	all := stats.Merge(res.Snapshots...)
	var acked, received, histCount float64
	for _, u := range workers {
		fams := metricstest.Scrape(t, u+"/metrics")
		for _, m := range fams[metrics.MessagesAcked].GetMetric() {
			for _, l := range m.Label {
				if l.GetName() == "run" && l.GetValue() != res.RunID {
					t.Errorf("%s: run label %q, want %q", u, l.GetValue(), res.RunID)
				}
			}
			acked += m.GetCounter().GetValue()
		}
		for _, m := range fams[metrics.MessagesReceived].GetMetric() {
			received += m.GetCounter().GetValue()
		}
		for _, m := range fams[metrics.PublishLatency].GetMetric() {
			histCount += float64(m.GetHistogram().GetSampleCount())
		}
	}
	if acked == 0 || acked != float64(all.Producer.Acked) || histCount != acked {
		t.Errorf("workers' /metrics: acked %v, publish latency samples %v; want the run's %d", acked, histCount, all.Producer.Acked)
	}
	if received != float64(all.Consumer.Total().Received) {
		t.Errorf("workers' /metrics: received %v, want %d", received, all.Consumer.Total().Received)
	}
	srv := httptest.NewServer(coll.Handler())
	defer srv.Close()
	fams := metricstest.Scrape(t, srv.URL)
	if b := fams[metrics.Backlog]; b == nil || b.Metric[0].GetGauge().GetValue() != 0 {
		t.Errorf("coordinator backlog after a complete run: %v, want 0", b)
	}
	// The last interval collected is the cool-down's: the hook saw the
	// run to its end.
	ph := fams[metrics.Phase]
	if ph == nil || len(ph.Metric) != 1 || phaseLabel(ph.Metric[0]) != string(PhaseCooldown) {
		t.Errorf("coordinator phase %v, want %s", ph, PhaseCooldown)
	}
}

func phaseLabel(m *dto.Metric) string {
	for _, l := range m.Label {
		if l.GetName() == "phase" {
			return l.GetValue()
		}
	}
	return ""
}
