package results

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"k8s.io/utils/ptr"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/stats"
)

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// phasePlan is one phase of a synthetic run.
type phasePlan struct {
	phase     stats.Phase
	intervals int
	// per producer worker and interval
	acked int64
	// fixed latencies (µs) so the expected quantiles are exact
	publishUs, delayUs, e2eUs int64
	// catchUp reads per consumer worker and interval (mixed workload)
	catchUpRecv int64
}

// syntheticRun builds the snapshots of producer and consumer workers; every
// acked message is received once by each of subs tailing subscriptions.
func syntheticRun(producers, consumers, subs int, msgSize int, plans []phasePlan) []stats.Snapshot {
	var out []stats.Snapshot
	start := t0
	for _, pl := range plans {
		for i := 0; i < pl.intervals; i++ {
			end := start.Add(10 * time.Second)
			for p := 0; p < producers; p++ {
				s := stats.Snapshot{Worker: fmt.Sprintf("producer-%d", p), Workers: 1, Phase: pl.phase, Index: i,
					Start: start, End: end, Elapsed: 10 * time.Second}
				s.Producer = stats.Producer{Sent: pl.acked + 1, SentBytes: (pl.acked + 1) * int64(msgSize),
					Acked: pl.acked, AckedBytes: pl.acked * int64(msgSize), PublishErrors: 1,
					PublishLatency: stats.NewHistogram(), SendDelay: stats.NewHistogram(), CorrectedLatency: stats.NewHistogram()}
				for k := int64(0); k < pl.acked; k++ {
					s.Producer.PublishLatency.RecordMicros(pl.publishUs)
					s.Producer.SendDelay.RecordMicros(pl.delayUs)
					s.Producer.CorrectedLatency.RecordMicros(pl.publishUs + pl.delayUs)
				}
				out = append(out, s)
			}
			for c := 0; c < consumers; c++ {
				s := stats.Snapshot{Worker: fmt.Sprintf("consumer-%d", c), Workers: 1, Phase: pl.phase, Index: i,
					Start: start, End: end, Elapsed: 10 * time.Second}
				s.Consumer = stats.Consumer{EndToEnd: stats.NewHistogram(), CatchUpEndToEnd: stats.NewHistogram(),
					Subscriptions: map[string]stats.Subscription{}}
				// Consumers split the subscriptions' reads evenly.
				perSub := pl.acked * int64(producers) / int64(consumers)
				for sub := 0; sub < subs; sub++ {
					s.Consumer.Subscriptions[fmt.Sprintf("sub-%d", sub)] = stats.Subscription{Received: perSub, ReceivedBytes: perSub * int64(msgSize)}
					for k := int64(0); k < perSub; k++ {
						s.Consumer.EndToEnd.RecordMicros(pl.e2eUs)
					}
				}
				if pl.catchUpRecv > 0 {
					s.Consumer.Subscriptions["catch-up"] = stats.Subscription{CatchUp: true, Received: pl.catchUpRecv, ReceivedBytes: pl.catchUpRecv * int64(msgSize)}
				}
				out = append(out, s)
			}
			start = end
		}
	}
	return out
}

func testInput(snaps []stats.Snapshot) Input {
	return Input{
		Run: "run-a", Namespace: "bench", System: v1alpha1.SystemKafka,
		Workload: v1alpha1.WorkloadSpec{Name: "1-topic-16-partitions-1kb", Topics: 1, PartitionsPerTopic: 16,
			MessageSize: 1000, SubscriptionsPerTopic: ptr.To[int32](2), ConsumerPerSubscription: 1, ProducersPerTopic: 2, ProducerRate: 2000},
		Durability:   &v1alpha1.EffectiveDurability{RequestedLevel: 1, AchievedLevel: 2, Replication: v1alpha1.ReplicationSync, Local: v1alpha1.LocalAsync},
		Snapshots:    snaps,
		ClockOffsets: []ClockOffset{{Worker: "consumer-0", OffsetMs: 0.4, UncertaintyMs: 0.1}},
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func near(t *testing.T, name string, got, want float64) {
	t.Helper()
	if want == 0 && got == 0 {
		return
	}
	if math.Abs(got-want)/math.Abs(want) > 0.001 {
		t.Errorf("%s = %v, want %v (within 0.1%%)", name, got, want)
	}
}

func TestSummarizeHeadline(t *testing.T) {
	snaps := syntheticRun(2, 2, 2, 1000, []phasePlan{
		// Warm-up is slow and must not show in the headline.
		{phase: stats.PhaseWarmup, intervals: 3, acked: 100, publishUs: 90000, delayUs: 9000, e2eUs: 99000},
		{phase: stats.PhaseMeasure, intervals: 6, acked: 10000, publishUs: 2500, delayUs: 40, e2eUs: 7000},
		{phase: stats.PhaseDrain, intervals: 2, acked: 5000, publishUs: 12000, delayUs: 40, e2eUs: 8000, catchUpRecv: 250000},
	})
	in := testInput(snaps)
	in.Workload.Mixed = &v1alpha1.MixedWorkload{CatchUpSubscriptionsPerTopic: 1}
	s, err := Summarize(in)
	if err != nil {
		t.Fatal(err)
	}
	r := s.Results
	// Measure: 2 producers x 10000 acked per 10 s = 2000 msg/s of 1000 B.
	near(t, "publishRateMsgPerSec", r.PublishRateMsgPerSec, 2000)
	near(t, "publishMBPerSec", r.PublishMBPerSec, 2)
	// 2 subscriptions each receive everything: 4 MB/s.
	near(t, "consumeMBPerSec", r.ConsumeMBPerSec, 4)
	near(t, "publish p50 ms", r.PublishLatencyMs.P50, 2.5)
	near(t, "publish p99.99 ms", r.PublishLatencyMs.P9999, 2.5)
	near(t, "publish max ms", r.PublishLatencyMs.Max, 2.5)
	near(t, "publish avg ms", r.PublishLatencyMs.Avg, 2.5)
	if r.EndToEndLatencyMs == nil {
		t.Fatal("no end-to-end latency")
	}
	near(t, "e2e p99 ms", r.EndToEndLatencyMs.P99, 7)
	if r.CatchUp == nil {
		t.Fatal("no catch-up summary for a run with a drain phase")
	}
	// Catch-up: 2 consumer workers x 250000 msgs x 1000 B per 10 s = 50 MB/s over 20 s.
	near(t, "drainMBPerSec", r.CatchUp.DrainMBPerSec, 50)
	near(t, "drainSeconds", r.CatchUp.DrainSeconds, 20)
	if r.CatchUp.PublishLatencyMs == nil {
		t.Fatal("no publish latency during the drain")
	}
	near(t, "drain publish p50", r.CatchUp.PublishLatencyMs.P50, 12)

	wantAcked := int64(2 * (3*100 + 6*10000 + 2*5000))
	if r.Acked != wantAcked || r.Sent != wantAcked+2*11 {
		t.Errorf("sent %d acked %d, want %d and %d", r.Sent, r.Acked, wantAcked+22, wantAcked)
	}
	// Tailing: 2 subs x acked; catch-up: 2 x 2 x 250000 (an imagined
	// backlog of older messages, more than acked here, so nothing is lost).
	if wantRecv := 2*wantAcked + 2*2*250000; r.Received != wantRecv {
		t.Errorf("received %d, want %d", r.Received, wantRecv)
	}
	if r.Lost != 0 {
		t.Errorf("lost %d, want 0", r.Lost)
	}

	if len(s.Phases) != 3 || s.Phases[0].Phase != stats.PhaseWarmup || s.Phases[1].Phase != stats.PhaseMeasure || s.Phases[2].Phase != stats.PhaseDrain {
		t.Fatalf("phases %+v", s.Phases)
	}
	m := s.Phases[1]
	if m.Intervals != 6 || m.Workers != 4 || m.Seconds != 60 || m.PublishErrors != 12 {
		t.Errorf("measure phase %+v", m)
	}
	near(t, "measure corrected p50", m.CorrectedLatencyMs.P50, 2.54)
	// The headline has the corrected latency beside the publish latency.
	if r.CorrectedLatencyMs == nil {
		t.Fatal("no corrected latency in the headline")
	}
	near(t, "headline corrected p50", r.CorrectedLatencyMs.P50, m.CorrectedLatencyMs.P50)
	near(t, "headline corrected p99.99", r.CorrectedLatencyMs.P9999, m.CorrectedLatencyMs.P9999)
	near(t, "measure send delay p50", m.SendDelayMs.P50, 0.04)
	if m.Curves == nil || len(m.Curves.PublishLatencyMs) == 0 || s.Phases[0].Curves != nil {
		t.Errorf("curves must be kept for measure (and drain) only")
	}
	if len(s.Series.Points) != 11 || s.Series.Stride != 1 {
		t.Fatalf("series has %d points (stride %d), want 11 (3+6+2)", len(s.Series.Points), s.Series.Stride)
	}
	p := s.Series.Points[3]
	if p.Phase != stats.PhaseMeasure || p.Index != 0 || p.OffsetSeconds != 30 || p.Seconds != 10 {
		t.Errorf("first measure point %+v", p)
	}
	near(t, "point publish rate", p.PublishRateMsgPerSec, 2000)
	if s.Subscriptions.Count != 3 || len(s.Subscriptions.Items) != 3 {
		t.Errorf("subscriptions %+v", s.Subscriptions)
	}
	if len(s.Workers) != 4 || s.Durability.AchievedLevel != 2 || s.ClockOffsets[0].OffsetMs != 0.4 {
		t.Errorf("detail lost: workers %v durability %+v offsets %+v", s.Workers, s.Durability, s.ClockOffsets)
	}
}

// TestSummarizeCountsLostMessages: the headline's lost, not consumed and
// duplicates are the coordinator's accounting once it is done; before (a
// partial result), what is unread is not consumed, never lost.
func TestSummarizeCountsLostMessages(t *testing.T) {
	snaps := syntheticRun(1, 1, 2, 100, []phasePlan{{phase: stats.PhaseMeasure, intervals: 2, acked: 1000, publishUs: 1000, e2eUs: 2000}})
	// One subscription misses 7 messages in the last interval.
	last := &snaps[len(snaps)-1]
	sub := last.Consumer.Subscriptions["sub-1"]
	sub.Received -= 7
	last.Consumer.Subscriptions["sub-1"] = sub
	in := testInput(snaps)
	s, err := Summarize(in)
	if err != nil {
		t.Fatal(err)
	}
	if s.Results.Lost != 0 || s.Results.NotConsumed != 7 {
		t.Fatalf("without accounting: lost %d, not consumed %d; want 0 and 7 (2 subscriptions x 2000 acked - 3993 received)", s.Results.Lost, s.Results.NotConsumed)
	}
	in.Delivery = &Delivery{Lost: 3, NotConsumed: 4, Duplicates: 2}
	s, _ = Summarize(in)
	if r := s.Results; r.Lost != 3 || r.NotConsumed != 4 || r.Duplicates != 2 || s.Duplicates != 2 {
		t.Fatalf("with accounting: lost %d, not consumed %d, duplicates %d (summary %d); want the accounting's 3, 4, 2", r.Lost, r.NotConsumed, r.Duplicates, s.Duplicates)
	}
	// Produce-only: nothing is expected to be received.
	in.Delivery = nil
	in.Workload.SubscriptionsPerTopic = ptr.To[int32](0)
	s, _ = Summarize(in)
	if s.Results.Lost != 0 || s.Results.NotConsumed != 0 {
		t.Fatalf("produce-only lost %d, not consumed %d, want 0", s.Results.Lost, s.Results.NotConsumed)
	}
}

func TestSummarizeNeedsMeasuredPhase(t *testing.T) {
	snaps := syntheticRun(1, 1, 1, 100, []phasePlan{{phase: stats.PhaseWarmup, intervals: 2, acked: 10, publishUs: 1}})
	_, err := Summarize(testInput(snaps))
	if err == nil || !strings.Contains(err.Error(), `no snapshot of phase "measure"`) {
		t.Fatalf("err = %v", err)
	}
	if _, err := BuildOMB(testInput(snaps)); err == nil {
		t.Fatal("BuildOMB accepted a run without a measured phase")
	}
}

// Partial results (the coordinator's periodic write, a run that failed
// early) may end before the measured phase: they are kept, marked partial,
// with what was measured so far.
func TestPartialResultsBeforeTheMeasuredPhase(t *testing.T) {
	snaps := syntheticRun(1, 1, 1, 100, []phasePlan{{phase: stats.PhaseWarmup, intervals: 2, acked: 10, publishUs: 1000, e2eUs: 2000}})
	in := testInput(snaps)
	in.Partial = true
	cm, sum, err := BuildConfigMap(in)
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Results.Partial {
		t.Error("summary not marked partial")
	}
	if sum.Results.PublishRateMsgPerSec != 0 {
		t.Errorf("headline publish rate %v without a measured phase; want 0", sum.Results.PublishRateMsgPerSec)
	}
	back, err := Read(cm)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Results.Partial || len(back.Phases) == 0 {
		t.Errorf("read back: partial %v, %d phases; want the warm-up kept", back.Results.Partial, len(back.Phases))
	}
}

// A later write replaces the results, and keeps the keys of the
// page-cache handshake that share the ConfigMap.
func TestWriteKeepsOtherKeys(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	ctx := context.Background()
	in := testInput(syntheticRun(1, 1, 1, 100, []phasePlan{{phase: stats.PhaseMeasure, intervals: 2, acked: 1000, publishUs: 1000, e2eUs: 2000}}))
	in.Partial = true
	cm, _, err := BuildConfigMap(in)
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["pagecache-request"] = "{}"
	if err := Write(ctx, c, cm); err != nil {
		t.Fatal(err)
	}
	in.Partial = false
	final, _, err := BuildConfigMap(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(ctx, c, final); err != nil {
		t.Fatal(err)
	}
	var got corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKeyFromObject(final), &got); err != nil {
		t.Fatal(err)
	}
	if _, ok := got.Data["pagecache-request"]; !ok {
		t.Error("the page-cache key was dropped by the results write")
	}
	sum, err := Read(&got)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Results.Partial {
		t.Error("the final write did not replace the partial results")
	}
}

// ombTestResult mirrors OMB's TestResult.java with its own field names (one
// struct per Java type), so this test reads our JSON as OMB's tooling would.
type ombTestResult struct {
	Workload          string    `json:"workload"`
	Driver            string    `json:"driver"`
	MessageSize       int64     `json:"messageSize"`
	Topics            int       `json:"topics"`
	Partitions        int       `json:"partitions"`
	ProducersPerTopic int       `json:"producersPerTopic"`
	ConsumersPerTopic int       `json:"consumersPerTopic"`
	PublishRate       []float64 `json:"publishRate"`
	PublishErrorRate  []float64 `json:"publishErrorRate"`
	ConsumeRate       []float64 `json:"consumeRate"`
	Backlog           []int64   `json:"backlog"`

	PublishLatencyAvg                      []float64          `json:"publishLatencyAvg"`
	PublishLatency50pct                    []float64          `json:"publishLatency50pct"`
	PublishLatency99pct                    []float64          `json:"publishLatency99pct"`
	PublishLatencyMax                      []float64          `json:"publishLatencyMax"`
	PublishDelayLatency50pct               []int64            `json:"publishDelayLatency50pct"`
	PublishDelayLatency99pct               []int64            `json:"publishDelayLatency99pct"`
	EndToEndLatency50pct                   []float64          `json:"endToEndLatency50pct"`
	EndToEndLatency9999pct                 []float64          `json:"endToEndLatency9999pct"`
	AggregatedPublishLatency99pct          float64            `json:"aggregatedPublishLatency99pct"`
	AggregatedPublishDelayLatencyAvg       float64            `json:"aggregatedPublishDelayLatencyAvg"`
	AggregatedPublishDelayLatency50pct     int64              `json:"aggregatedPublishDelayLatency50pct"`
	AggregatedEndToEndLatency50pct         float64            `json:"aggregatedEndToEndLatency50pct"`
	AggregatedPublishLatencyQuantiles      map[string]float64 `json:"aggregatedPublishLatencyQuantiles"`
	AggregatedPublishDelayLatencyQuantiles map[string]int64   `json:"aggregatedPublishDelayLatencyQuantiles"`
	AggregatedEndToEndLatencyQuantiles     map[string]float64 `json:"aggregatedEndToEndLatencyQuantiles"`
}

// ombFields are every field of OMB's TestResult.java.
var ombFields = func() []string {
	f := []string{"workload", "driver", "messageSize", "topics", "partitions", "producersPerTopic", "consumersPerTopic",
		"publishRate", "publishErrorRate", "consumeRate", "backlog",
		"aggregatedPublishLatencyQuantiles", "aggregatedPublishDelayLatencyQuantiles", "aggregatedEndToEndLatencyQuantiles"}
	for _, base := range []string{"publishLatency", "publishDelayLatency", "endToEndLatency"} {
		for _, suf := range []string{"Avg", "50pct", "75pct", "95pct", "99pct", "999pct", "9999pct", "99999pct", "Max"} {
			up := strings.ToUpper(base[:1]) + base[1:]
			f = append(f, base+suf, "aggregated"+up+suf)
		}
	}
	return f
}()

func TestOMBResultFieldsAndUnits(t *testing.T) {
	snaps := syntheticRun(2, 2, 1, 1000, []phasePlan{
		{phase: stats.PhaseWarmup, intervals: 2, acked: 100, publishUs: 90000, delayUs: 9000, e2eUs: 99000},
		{phase: stats.PhaseMeasure, intervals: 7, acked: 10000, publishUs: 2500, delayUs: 40, e2eUs: 7000},
	})
	r, err := BuildOMB(testInput(snaps))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	for _, f := range ombFields {
		if _, ok := raw[f]; !ok {
			t.Errorf("OMB field %q missing", f)
		}
	}
	if len(raw) != len(ombFields) {
		t.Errorf("%d fields written, OMB has %d", len(raw), len(ombFields))
	}
	// Every list has one entry per measured 10 s sample.
	for f, v := range raw {
		var list []any
		if json.Unmarshal(v, &list) == nil && list != nil && len(list) != 7 {
			t.Errorf("list %s has %d entries, want 7 (measured intervals)", f, len(list))
		}
	}
	var o ombTestResult
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatalf("OMB's types do not read our JSON: %v", err)
	}
	if o.Workload != "1-topic-16-partitions-1kb" || o.Driver != "kafka" || o.MessageSize != 1000 || o.Partitions != 16 || o.ProducersPerTopic != 2 || o.ConsumersPerTopic != 1 {
		t.Errorf("metadata %+v", o)
	}
	near(t, "publishRate[0] msg/s", o.PublishRate[0], 2000)
	near(t, "consumeRate[0] msg/s", o.ConsumeRate[0], 2000)
	near(t, "publishErrorRate[0]", o.PublishErrorRate[0], 0.2)
	near(t, "publishLatency50pct[0] ms", o.PublishLatency50pct[0], 2.5)
	near(t, "publishLatencyMax[6] ms", o.PublishLatencyMax[6], 2.5)
	if o.PublishDelayLatency50pct[0] != 40 || o.AggregatedPublishDelayLatency50pct != 40 {
		t.Errorf("publish delay must be in µs: %d, %d, want 40", o.PublishDelayLatency50pct[0], o.AggregatedPublishDelayLatency50pct)
	}
	near(t, "aggregatedPublishDelayLatencyAvg µs", o.AggregatedPublishDelayLatencyAvg, 40)
	near(t, "endToEndLatency50pct[3] ms", o.EndToEndLatency50pct[3], 7)
	near(t, "aggregatedEndToEndLatency50pct ms", o.AggregatedEndToEndLatency50pct, 7)
	near(t, "aggregatedPublishLatency99pct ms", o.AggregatedPublishLatency99pct, 2.5)
	for k, m := range map[string]map[string]float64{"publish": o.AggregatedPublishLatencyQuantiles, "e2e": o.AggregatedEndToEndLatencyQuantiles} {
		if _, ok := m["50.0"]; !ok {
			t.Errorf("%s quantile map lacks Java-style key \"50.0\": %v", k, m)
		}
		if _, ok := m["99.99"]; !ok {
			t.Errorf("%s quantile map lacks key \"99.99\"", k)
		}
	}
	near(t, "publish quantile 50.0 ms", o.AggregatedPublishLatencyQuantiles["50.0"], 2.5)
	if o.AggregatedPublishDelayLatencyQuantiles["99.0"] != 40 {
		t.Errorf("delay quantile 99.0 = %d µs, want 40", o.AggregatedPublishDelayLatencyQuantiles["99.0"])
	}
	// Backlog counts from the run's start (warm-up included), as OMB's
	// does. The workload has 2 subscriptions per topic but the synthetic
	// consumers serve one, so one copy of everything acked is missing:
	// 2 x 2 x 100 from the warm-up plus 20,000 per measured interval.
	for i, bl := range o.Backlog {
		if want := int64(400 + 20000*(i+1)); bl != want {
			t.Errorf("backlog[%d] = %d, want %d", i, bl, want)
		}
	}
	// Round trip through our own type.
	var back OMBResult
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.AggregatedPublishLatencyQuantiles[99.99] != r.AggregatedPublishLatencyQuantiles[99.99] {
		t.Errorf("quantile map round trip changed p99.99")
	}
}

// bigRun is a synthetic 60-minute run of 10,000 partitions, as 10,000
// topics with one partition and one subscription each, so the run has
// 10,000 subscriptions: the worst case for per-subscription detail. Every
// interval's histograms hold a wide distribution (many populated buckets,
// the worst case for their encoded size). To keep the test's memory small,
// consumer workers report each subscription in the first and the last
// interval of the measured phase only; the output's size depends on the
// merged result, which has all 10,000.
func bigRun() Input {
	const (
		partitions = 10000
		producers  = 4
		consumers  = 4
		warmup     = 6   // 1 minute
		measure    = 360 // 60 minutes of 10 s intervals
	)
	rng := rand.New(rand.NewPCG(42, 42))
	wide := func(n int, medianUs float64) *stats.Histogram {
		h := stats.NewHistogram()
		for i := 0; i < n; i++ {
			h.RecordMicros(int64(medianUs * math.Exp(1.5*rng.NormFloat64())))
		}
		return h
	}
	var snaps []stats.Snapshot
	start := t0
	for _, ph := range []struct {
		p stats.Phase
		n int
	}{{stats.PhaseWarmup, warmup}, {stats.PhaseMeasure, measure}} {
		for i := 0; i < ph.n; i++ {
			end := start.Add(10 * time.Second)
			for w := 0; w < producers; w++ {
				snaps = append(snaps, stats.Snapshot{Worker: fmt.Sprintf("p-%d", w), Workers: 1, Phase: ph.p, Index: i,
					Start: start, End: end, Elapsed: 10 * time.Second,
					Producer: stats.Producer{Sent: 500000, SentBytes: 5e8, Acked: 500000, AckedBytes: 5e8,
						PublishLatency: wide(1500, 3000), SendDelay: wide(1500, 50), CorrectedLatency: wide(1500, 3100)}})
			}
			for w := 0; w < consumers; w++ {
				s := stats.Snapshot{Worker: fmt.Sprintf("c-%d", w), Workers: 1, Phase: ph.p, Index: i,
					Start: start, End: end, Elapsed: 10 * time.Second,
					Consumer: stats.Consumer{EndToEnd: wide(1500, 8000), CatchUpEndToEnd: stats.NewHistogram()}}
				if ph.p == stats.PhaseMeasure && (i == 0 || i == measure-1) {
					s.Consumer.Subscriptions = map[string]stats.Subscription{}
					for sub := w; sub < partitions; sub += consumers {
						n := int64(1000 + rng.IntN(50))
						s.Consumer.Subscriptions[fmt.Sprintf("streambench-run-a-topic-%05d-sub-0", sub)] = stats.Subscription{Received: n, ReceivedBytes: n * 1000}
					}
				}
				snaps = append(snaps, s)
			}
			start = end
		}
	}
	in := testInput(snaps)
	in.Workload.Topics, in.Workload.PartitionsPerTopic, in.Workload.SubscriptionsPerTopic = partitions, 1, ptr.To[int32](1)
	in.Owner = &OwnerRef{Name: "run-a", UID: "0b9b8f2e-1111-2222-3333-444455556666"}
	return in
}

func TestConfigMapFits10000PartitionsSixtyMinutes(t *testing.T) {
	in := bigRun()
	cm, sum, err := BuildConfigMap(in)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(cm)
	if err != nil {
		t.Fatal(err)
	}
	raw := 0
	for k, v := range cm.Data {
		raw += len(k) + len(v)
	}
	for k, v := range cm.BinaryData {
		raw += len(k) + len(v)
	}
	t.Logf("ConfigMap: %d bytes as JSON, %d bytes of data; summary.json %d, omb-result.json %d, histograms %d, intervals %d; truncation %+v",
		len(b), raw, len(cm.Data[KeySummary]), len(cm.Data[KeyOMB]), len(cm.BinaryData[KeyHistograms]), len(cm.BinaryData[KeyIntervalHistograms]), sum.Truncation)
	if len(b) >= 1<<20 || raw >= 1<<20 {
		t.Fatalf("ConfigMap is %d bytes as JSON (%d of data), must be < 1 MiB", len(b), raw)
	}
	// The outcome step's room is left: the summary's cost and faults.
	if size, err := EncodedSize(cm); err != nil || size > MaxConfigMapBytes-OutcomeReserve {
		t.Errorf("ConfigMap of %d bytes (%v) leaves less than OutcomeReserve (%d) of the budget %d", size, err, OutcomeReserve, MaxConfigMapBytes)
	}
	if cm.Name != "run-a-results" || cm.Namespace != "bench" || cm.Labels[LabelRun] != "run-a" {
		t.Errorf("metadata %+v", cm.ObjectMeta)
	}
	if len(cm.OwnerReferences) != 1 || cm.OwnerReferences[0].Kind != "BenchmarkRun" || cm.OwnerReferences[0].UID != types.UID(in.Owner.UID) {
		t.Errorf("owner references %+v", cm.OwnerReferences)
	}
	// 10,000 subscriptions cannot all be listed; the summary must say so.
	if sum.Truncation == nil || sum.Truncation.SubscriptionsListed != MaxListedSubscriptions || sum.Subscriptions.Count != 10000 {
		t.Fatalf("truncation %+v, subscriptions count %d", sum.Truncation, sum.Subscriptions.Count)
	}
	got, err := Read(cm)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := mustJSON(t, got.Results), mustJSON(t, sum.Results); a != b {
		t.Errorf("read back headline %+v, built %+v", got.Results, sum.Results)
	}
	near(t, "publish rate", got.Results.PublishRateMsgPerSec, 200000)
	// The series covers the whole run, however thinned: its points' seconds
	// add up to the 61 minutes.
	total := 0.0
	for _, p := range got.Series.Points {
		total += p.Seconds
	}
	near(t, "series seconds", total, 61*60)
	omb, err := ReadOMB(cm)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(omb.PublishRate); n*got.Series.Stride < 360 || len(omb.EndToEndLatency99pct) != n {
		t.Errorf("OMB lists: %d entries with stride %d for 360 intervals", n, got.Series.Stride)
	}
	// The whole-phase histogram log is complete and readable by
	// HdrHistogram's log reader, and its measure publish latency is the
	// exact merge of every interval.
	logText, err := ReadHistogramLog(cm, KeyHistograms)
	if err != nil {
		t.Fatal(err)
	}
	rd := hdr.NewHistogramLogReader(bytes.NewReader(logText))
	found := 0
	want := stats.Aggregate(in.Snapshots, stats.PhaseMeasure).Producer.PublishLatency
	for {
		h, err := rd.NextIntervalHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			break
		}
		found++
		if h.Tag() == "measure.publishLatency" && h.TotalCount() != want.Count() {
			t.Errorf("measure.publishLatency in the log has %d values, want %d", h.TotalCount(), want.Count())
		}
	}
	if found != 2*4 { // warmup and measure x publish, sendDelay, corrected, endToEnd
		t.Errorf("histogram log has %d histograms, want 8", found)
	}
}

func TestConfigMapSmallRunKeepsFullDetail(t *testing.T) {
	snaps := syntheticRun(1, 1, 1, 100, []phasePlan{{phase: stats.PhaseMeasure, intervals: 6, acked: 1000, publishUs: 1000, e2eUs: 2000}})
	cm, sum, err := BuildConfigMap(testInput(snaps))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Truncation != nil {
		t.Errorf("a small run was thinned: %+v", sum.Truncation)
	}
	if _, ok := cm.BinaryData[KeyIntervalHistograms]; !ok {
		t.Errorf("interval histogram log missing")
	}
	if cm.OwnerReferences != nil {
		t.Errorf("owner set without Input.Owner")
	}
}

func TestReadRejectsForeignConfigMaps(t *testing.T) {
	for name, cm := range map[string]*corev1.ConfigMap{
		"no key":     {Data: map[string]string{"x": "y"}},
		"bad json":   {Data: map[string]string{KeySummary: "{"}},
		"old schema": {Data: map[string]string{KeySummary: `{"schemaVersion":"v0"}`}},
	} {
		if _, err := Read(cm); err == nil {
			t.Errorf("%s: Read accepted it", name)
		}
	}
}

// TestWriteCreatesThenUpdates uses controller-runtime's fake client (an
// in-memory object store) because this package's tests run without an API
// server; the envtest suite exercises the real one.
func TestWriteCreatesThenUpdates(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	ctx := context.Background()
	snaps := syntheticRun(1, 1, 1, 100, []phasePlan{{phase: stats.PhaseMeasure, intervals: 2, acked: 1000, publishUs: 1000, e2eUs: 2000}})
	in := testInput(snaps)
	cm, _, err := BuildConfigMap(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(ctx, c, cm); err != nil {
		t.Fatal(err)
	}
	// A restarted coordinator writes again, with other numbers.
	in.Snapshots = syntheticRun(1, 1, 1, 100, []phasePlan{{phase: stats.PhaseMeasure, intervals: 2, acked: 3000, publishUs: 1000, e2eUs: 2000}})
	cm2, _, err := BuildConfigMap(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(ctx, c, cm2); err != nil {
		t.Fatal(err)
	}
	got, err := Get(ctx, c, "bench", "run-a")
	if err != nil {
		t.Fatal(err)
	}
	near(t, "publish rate after update", got.Results.PublishRateMsgPerSec, 300)
}

// TestSecurityInSummaryOnly: the clients' security is carried into
// summary.json as "security" (no secret, only what was negotiated); OMB's
// result JSON has no field for it and stays OMB's. No security recorded
// (an old run) leaves the key out, so a reader can tell "not recorded"
// from a plaintext run.
func TestSecurityInSummaryOnly(t *testing.T) {
	snaps := syntheticRun(1, 1, 1, 1000, []phasePlan{{phase: stats.PhaseMeasure, intervals: 2, acked: 100, publishUs: 2500, e2eUs: 7000}})
	in := testInput(snaps)
	in.Security = &v1alpha1.SecurityInfo{Protocol: "SASL_SSL", Mechanism: "SCRAM-SHA-512", TLSVersion: "TLS 1.3", Verification: "full"}
	s, err := Summarize(in)
	if err != nil {
		t.Fatal(err)
	}
	if got := mustJSON(t, s); !strings.Contains(got, `"security":{"protocol":"SASL_SSL","mechanism":"SCRAM-SHA-512","tlsVersion":"TLS 1.3","verification":"full"}`) {
		t.Errorf("summary.json lacks the security: %s", got[strings.LastIndex(got, "}}")-200:])
	}
	omb, err := BuildOMB(in)
	if err != nil {
		t.Fatal(err)
	}
	if got := mustJSON(t, omb); strings.Contains(got, "SASL_SSL") || strings.Contains(got, "security") {
		t.Errorf("OMB's result JSON got the security: it has no such field")
	}
	in.Security = nil
	s, err = Summarize(in)
	if err != nil {
		t.Fatal(err)
	}
	if got := mustJSON(t, s); strings.Contains(got, `"security"`) {
		t.Errorf("an unrecorded security must leave the key out, got it in summary.json")
	}
}

// The series places each loss in the interval its send was in, by where
// the producers' sequence numbers stood at the intervals' ends, warm-up
// included; without a delivery record the series says nothing of loss.
func TestSeriesPlacesLosses(t *testing.T) {
	snaps := syntheticRun(2, 1, 1, 100, []phasePlan{
		{phase: stats.PhaseWarmup, intervals: 1, acked: 1000, publishUs: 1000, e2eUs: 2000},
		{phase: stats.PhaseMeasure, intervals: 3, acked: 1000, publishUs: 1000, e2eUs: 2000}})
	// Producer 1 on worker producer-0, producer 2 on producer-1: 1001
	// sends an interval each.
	n := map[string]uint64{}
	for i := range snaps {
		s := &snaps[i]
		if id := map[string]uint32{"producer-0": 1, "producer-1": 2}[s.Worker]; id != 0 {
			n[s.Worker] += uint64(s.Producer.Sent)
			s.Producer.SeqEnds = map[uint32]uint64{id: n[s.Worker]}
		}
	}
	// The consumer worker has one interval more in the measured phase
	// (its tick fell just before the phase change): no producer's sends
	// are in it.
	extra := snaps[len(snaps)-1]
	if extra.Worker != "consumer-0" {
		t.Fatalf("the last snapshot is %s's", extra.Worker)
	}
	extra.Index++
	extra.Start, extra.End = extra.End, extra.End.Add(10*time.Second)
	snaps = append(snaps, extra)
	in := testInput(snaps)
	in.Delivery = &Delivery{Lost: 35, LostRuns: map[uint32][]stats.SeqRange{
		// 11 in the warm-up and 9 in measured interval 0, across their
		// boundary at 1001; 5 more in interval 0.
		1: {{From: 990, To: 1010}, {From: 1500, To: 1505}},
		// Interval 2 (3003..4003), lost on two subscriptions.
		2: {{From: 3100, To: 3105}, {From: 3100, To: 3105}},
	}}
	s, err := Summarize(in)
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, p := range s.Series.Points {
		if p.Lost == nil {
			t.Fatalf("point %s %d: no loss placed", p.Phase, p.Index)
		}
		got = append(got, *p.Lost)
	}
	if want := []int64{11, 14, 0, 10, 0}; !slices.Equal(got, want) {
		t.Errorf("lost per point %v, want %v (warm-up: 990..1000; measured 0: 1001..1009 and 1500..1504; measured 2: 3100..3104 twice; measured 3: the consumer's alone)", got, want)
	}
	in.Delivery = nil
	s, _ = Summarize(in)
	for _, p := range s.Series.Points {
		if p.Lost != nil {
			t.Errorf("point %d: lost %d without a delivery record", p.Index, *p.Lost)
		}
	}
}
