package metrics

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/internal/metrics/metricstest"

	"github.com/streambench/streambench-operator/internal/stats"
)

// snapshotOf records real values into a stats.Recorder and cuts them.
func snapshotOf(worker string, phase stats.Phase, lat []time.Duration, received int) stats.Snapshot {
	now := time.Now()
	r := stats.NewRecorder(worker, phase, now)
	for _, d := range lat {
		r.RecordSend(now, now, 100)
		r.RecordAck(now, now, now.Add(d), 100)
	}
	r.RecordPublishError()
	sub := r.Subscription("s", false)
	for i := 0; i < received; i++ {
		sub.RecordReceive(now, now.Add(3*time.Millisecond), 100)
	}
	return r.Cut(now.Add(time.Second))
}

func TestCollectorCountersAndHistograms(t *testing.T) {
	c := New()
	srv := httptest.NewServer(c.Handler())
	defer srv.Close()
	if fams := metricstest.Scrape(t, srv.URL); len(fams) != 0 {
		t.Errorf("before a run: %d families, want none", len(fams))
	}
	c.Reset("run-a")
	c.Add(snapshotOf("w0", stats.PhaseWarmup, []time.Duration{300 * time.Microsecond, 4 * time.Millisecond}, 2))
	c.Add(snapshotOf("w0", stats.PhaseMeasure, []time.Duration{40 * time.Millisecond}, 1))
	c.SetPhase(stats.PhaseMeasure)
	fams := metricstest.Scrape(t, srv.URL)
	val := func(name string) float64 {
		f := fams[name]
		if f == nil || len(f.Metric) != 1 {
			t.Fatalf("%s: %v", name, f)
		}
		m := f.Metric[0]
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["run"] != "run-a" || labels["worker"] != "w0" {
			t.Errorf("%s labels %v, want run-a and w0", name, labels)
		}
		return m.GetCounter().GetValue()
	}
	for name, want := range map[string]float64{MessagesSent: 3, MessagesAcked: 3, BytesAcked: 300, PublishErrors: 2, MessagesReceived: 3, BytesReceived: 300} {
		if got := val(name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	h := fams[PublishLatency].Metric[0].GetHistogram()
	if h.GetSampleCount() != 3 {
		t.Fatalf("publish latency count %d, want 3", h.GetSampleCount())
	}
	// 0.3 ms in the 0.5 ms bucket, 4 ms under 5 ms, 40 ms under 50 ms.
	want := map[float64]uint64{0.0005: 1, 0.002: 1, 0.005: 2, 0.02: 2, 0.05: 3, 10: 3}
	for _, b := range h.Bucket {
		if w, ok := want[b.GetUpperBound()]; ok && b.GetCumulativeCount() != w {
			t.Errorf("bucket le=%v: %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), w)
		}
	}
	if s := h.GetSampleSum(); s < 0.044 || s > 0.045 {
		t.Errorf("sum %v s, want 0.0443 (within HDR precision)", s)
	}
	if e := fams[EndToEndLatency].Metric[0].GetHistogram(); e.GetSampleCount() != 3 {
		t.Errorf("end-to-end count %d, want 3", e.GetSampleCount())
	}
	ph := fams[Phase]
	if ph == nil || len(ph.Metric) != 1 || ph.Metric[0].Label[0].GetValue() != string(stats.PhaseMeasure) && ph.Metric[0].Label[1].GetValue() != string(stats.PhaseMeasure) {
		t.Errorf("phase %v, want measure", ph)
	}
	if fams[Backlog] != nil {
		t.Errorf("a worker reports a backlog")
	}

	// The coordinator: the backlog over all workers, not their counts.
	c.Reset("run-b")
	c.SetSubscriptionsPerTopic(2)
	c.Add(snapshotOf("w0", stats.PhaseMeasure, []time.Duration{time.Millisecond, time.Millisecond}, 0),
		snapshotOf("w1", stats.PhaseMeasure, nil, 3))
	fams = metricstest.Scrape(t, srv.URL)
	if b := fams[Backlog]; b == nil || b.Metric[0].GetGauge().GetValue() != 1 {
		t.Errorf("backlog %v, want 2 acked x 2 subscriptions - 3 received = 1", b)
	}
	if fams[MessagesAcked] != nil {
		t.Errorf("the coordinator repeats the workers' counters")
	}
}
