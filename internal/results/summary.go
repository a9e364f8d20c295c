// Package results turns the snapshots the coordinator collected into what a
// run leaves behind: the summary JSON (whose headline is exactly
// v1alpha1.ResultsSummary, the run's status.results), an OMB-compatible
// result JSON that OMB's chart tooling reads, and the <run>-results
// ConfigMap that carries both plus compressed HdrHistogram logs.
// docs/results.md describes every field and unit.
package results

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/stats"
)

// prepared holds what every output of a run is computed from, computed
// once: BuildConfigMap may lay the results out several times.
type prepared struct {
	in     Input
	phases []stats.Phase
	// aggs and series are per phase (series at stride 1, merged over
	// workers).
	aggs   map[stats.Phase]stats.Snapshot
	series map[stats.Phase][]stats.Snapshot
	all    stats.Snapshot
}

func prepare(in Input) (*prepared, error) {
	// Partial results (a periodic write, a failed run) may end before the
	// measured phase; their headline is then empty, and says so (Partial).
	if len(stats.OfPhase(in.Snapshots, stats.PhaseMeasure)) == 0 && !in.Partial {
		return nil, fmt.Errorf("results of run %q: no snapshot of phase %q; the run did not reach its measured phase (check the coordinator's log and spec.workload.testDurationMinutes)", in.Run, stats.PhaseMeasure)
	}
	p := &prepared{in: in, phases: orderedPhases(in.Snapshots),
		aggs: map[stats.Phase]stats.Snapshot{}, series: map[stats.Phase][]stats.Snapshot{}}
	workers := map[stats.Phase]map[string]bool{}
	for _, s := range in.Snapshots {
		if workers[s.Phase] == nil {
			workers[s.Phase] = map[string]bool{}
		}
		workers[s.Phase][s.Worker] = true
	}
	aggs := make([]stats.Snapshot, 0, len(p.phases))
	for _, ph := range p.phases {
		p.series[ph] = stats.Series(in.Snapshots, ph)
		// The merge of a phase's series is its aggregate (Elapsed: the sum
		// of the intervals' means over workers); merging each histogram
		// once more instead of again from every snapshot halves the work.
		a := stats.Merge(p.series[ph]...)
		a.Workers = len(workers[ph])
		p.aggs[ph] = a
		aggs = append(aggs, a)
	}
	p.all = stats.Merge(aggs...)
	return p, nil
}

// phaseSeries is the series of one phase, thinned by stride.
func (p *prepared) phaseSeries(ph stats.Phase, stride int) []stats.Snapshot {
	return strided(p.series[ph], stride)
}

// Summarize computes the full-detail summary of a run.
func Summarize(in Input) (*Summary, error) {
	p, err := prepare(in)
	if err != nil {
		return nil, err
	}
	return p.summarize(1), nil
}

func detail(h *stats.Histogram) *LatencyDetail {
	if h.Count() == 0 {
		return nil
	}
	q := h.Quantiles()
	return &LatencyDetail{
		Count: q.Count, Avg: q.Avg / 1000, P50: ms(q.P50), P75: ms(q.P75), P95: ms(q.P95),
		P99: ms(q.P99), P999: ms(q.P999), P9999: ms(q.P9999), Max: ms(q.Max),
		Overflow: q.Overflow, Negative: q.Negative,
	}
}

func headline(h *stats.Histogram) v1alpha1.LatencySummary {
	d := detail(h)
	if d == nil {
		return v1alpha1.LatencySummary{}
	}
	return v1alpha1.LatencySummary{Avg: d.Avg, P50: d.P50, P99: d.P99, P999: d.P999, P9999: d.P9999, Max: d.Max}
}

func ms(us int64) float64 { return float64(us) / 1000 }

func curve(h *stats.Histogram) []CurvePoint {
	c := h.Curve()
	if c == nil {
		return nil
	}
	out := make([]CurvePoint, len(c))
	for i, p := range c {
		out[i] = CurvePoint{Percentile: p.Percentile, Ms: ms(p.Micros)}
	}
	return out
}

// subscriptionsPerTopic is how many times each acknowledged message must be
// received: every tailing and catch-up subscription of its topic.
func subscriptionsPerTopic(w v1alpha1.WorkloadSpec) int64 {
	n := int64(1)
	if w.SubscriptionsPerTopic != nil {
		n = int64(*w.SubscriptionsPerTopic)
	}
	if w.Mixed != nil {
		c := int64(w.Mixed.CatchUpSubscriptionsPerTopic)
		if c == 0 {
			c = 1
		}
		n += c
	}
	return n
}

// orderedPhases lists the phases by their earliest snapshot start.
func orderedPhases(snaps []stats.Snapshot) []stats.Phase {
	first := map[stats.Phase]time.Time{}
	for _, s := range snaps {
		if t, ok := first[s.Phase]; !ok || s.Start.Before(t) {
			first[s.Phase] = s.Start
		}
	}
	ps := stats.Phases(snaps)
	sort.SliceStable(ps, func(i, j int) bool { return first[ps[i]].Before(first[ps[j]]) })
	return ps
}

func (p *prepared) summarize(seriesStride int) *Summary {
	in, all := p.in, p.all
	s := &Summary{
		SchemaVersion: SchemaVersion, Run: in.Run, System: in.System, Workload: in.Workload,
		Durability: in.Durability, Start: all.Start, End: all.End,
		ClockOffsets: in.ClockOffsets, RateSearch: in.RateSearch,
		Notes:   append([]string(nil), in.Notes...),
		Testbed: in.Testbed, BrokerResources: in.BrokerResources, Brokers: in.Brokers,
		Security: in.Security, Collection: in.Collection, Faults: in.Faults,
		FailureSettings: in.FailureSettings,
	}
	workers := map[string]bool{}
	for _, sn := range in.Snapshots {
		workers[sn.Worker] = true
	}
	for w := range workers {
		s.Workers = append(s.Workers, w)
	}
	sort.Strings(s.Workers)

	for _, ph := range p.phases {
		s.Phases = append(s.Phases, p.phaseSummary(ph))
	}

	// Headline: the measured phase, plus whole-run counts.
	m := p.aggs[stats.PhaseMeasure]
	total := m.Consumer.Total()
	r := &s.Results
	r.Partial = in.Partial
	r.PublishRateMsgPerSec = m.Rate(m.Producer.Acked)
	r.PublishMBPerSec = m.Rate(m.Producer.AckedBytes) / bytesPerMB
	r.ConsumeMBPerSec = m.Rate(total.ReceivedBytes) / bytesPerMB
	r.PublishLatencyMs = headline(m.Producer.PublishLatency)
	if m.Producer.CorrectedLatency.Count() > 0 {
		c := headline(m.Producer.CorrectedLatency)
		r.CorrectedLatencyMs = &c
	}
	if m.Consumer.EndToEnd.Count() > 0 {
		e := headline(m.Consumer.EndToEnd)
		r.EndToEndLatencyMs = &e
	}
	if d, ok := p.aggs[stats.PhaseDrain]; ok {
		read := d.Consumer.Totals(true)
		if read.Received == 0 { // not mixed: every subscription drains
			read = d.Consumer.Total()
		}
		cu := &v1alpha1.CatchUpSummary{
			DrainMBPerSec: d.Rate(read.ReceivedBytes) / bytesPerMB,
			DrainSeconds:  d.Seconds(),
		}
		if d.Producer.PublishLatency.Count() > 0 {
			pl := headline(d.Producer.PublishLatency)
			cu.PublishLatencyMs = &pl
		}
		r.CatchUp = cu
	}
	whole := all.Consumer.Total()
	r.Sent, r.Acked, r.Received = all.Producer.Sent, all.Producer.Acked, whole.Received
	if d := in.Delivery; d != nil {
		r.Lost, r.NotConsumed, r.Duplicates = d.Lost, d.NotConsumed, d.Duplicates
	} else {
		// No accounting yet (partial results): every acknowledged message
		// must reach every subscription of its topic once, and what has
		// not is unread, not known to be lost.
		r.Lost, r.Duplicates = whole.Lost, whole.Duplicates
		if subs := subscriptionsPerTopic(in.Workload); subs > 0 {
			r.NotConsumed = max(0, all.Producer.Acked*subs-(whole.Received-whole.Duplicates)-r.Lost)
		}
	}
	s.Duplicates = r.Duplicates

	if b := in.BrokerResources; b != nil {
		t := b.Total
		r.BrokerResources = &t
	}

	s.Series = p.seriesOf(seriesStride)
	s.Subscriptions = subscriptions(all.Consumer.Subscriptions)
	return s
}

func (pr *prepared) phaseSummary(p stats.Phase) PhaseSummary {
	a := pr.aggs[p]
	t := a.Consumer.Total()
	ps := PhaseSummary{
		Phase: p, Seconds: a.Seconds(), Intervals: len(pr.series[p]), Workers: a.Workers,
		Sent: a.Producer.Sent, Acked: a.Producer.Acked, PublishErrors: a.Producer.PublishErrors,
		Received: t.Received, Duplicates: t.Duplicates,
		PublishRateMsgPerSec:      a.Rate(a.Producer.Acked),
		PublishMBPerSec:           a.Rate(a.Producer.AckedBytes) / bytesPerMB,
		PublishErrorRateMsgPerSec: a.Rate(a.Producer.PublishErrors),
		ConsumeRateMsgPerSec:      a.Rate(t.Received),
		ConsumeMBPerSec:           a.Rate(t.ReceivedBytes) / bytesPerMB,
		CatchUpConsumeMBPerSec:    a.Rate(a.Consumer.Totals(true).ReceivedBytes) / bytesPerMB,
		PublishLatencyMs:          detail(a.Producer.PublishLatency),
		SendDelayMs:               detail(a.Producer.SendDelay),
		CorrectedLatencyMs:        detail(a.Producer.CorrectedLatency),
		EndToEndLatencyMs:         detail(a.Consumer.EndToEnd),
		CatchUpEndToEndLatencyMs:  detail(a.Consumer.CatchUpEndToEnd),
	}
	if p == stats.PhaseMeasure || p == stats.PhaseDrain {
		ps.Curves = &Curves{
			PublishLatencyMs:   curve(a.Producer.PublishLatency),
			CorrectedLatencyMs: curve(a.Producer.CorrectedLatency),
			EndToEndLatencyMs:  curve(a.Consumer.EndToEnd),
		}
	}
	return ps
}

// strided merges every stride consecutive points of a phase series.
func strided(points []stats.Snapshot, stride int) []stats.Snapshot {
	if stride <= 1 {
		return points
	}
	var out []stats.Snapshot
	for i := 0; i < len(points); i += stride {
		j := min(i+stride, len(points))
		m := stats.Merge(points[i:j]...)
		// Merge of one phase's consecutive points (each already merged over
		// workers): Elapsed is the sum of their lengths, the span of the
		// merged points.
		m.Index = points[i].Index
		out = append(out, m)
	}
	return out
}

func (pr *prepared) seriesOf(stride int) Series {
	in := pr.in
	subs := subscriptionsPerTopic(in.Workload)
	out := Series{Stride: stride, Points: []SeriesPoint{}}
	var start time.Time
	for _, s := range in.Snapshots {
		if start.IsZero() || s.Start.Before(start) {
			start = s.Start
		}
	}
	var acked, received int64
	// Where each producer's sequence numbers stood at the previous
	// point's end: the point's sends are from there to its own.
	from := map[uint32]uint64{}
	placed := in.Delivery != nil && slices.ContainsFunc(in.Snapshots, func(s stats.Snapshot) bool { return len(s.Producer.SeqEnds) > 0 })
	for _, p := range pr.phases {
		for _, pt := range pr.phaseSeries(p, stride) {
			t := pt.Consumer.Total()
			acked += pt.Producer.Acked
			received += t.Received - t.Duplicates
			backlog := acked*subs - received
			if backlog < 0 {
				backlog = 0
			}
			out.Points = append(out.Points, SeriesPoint{
				Phase: p, Index: pt.Index,
				OffsetSeconds:             pt.Start.Sub(start).Seconds(),
				Seconds:                   pt.Seconds(),
				PublishRateMsgPerSec:      pt.Rate(pt.Producer.Acked),
				PublishMBPerSec:           pt.Rate(pt.Producer.AckedBytes) / bytesPerMB,
				PublishErrorRateMsgPerSec: pt.Rate(pt.Producer.PublishErrors),
				ConsumeRateMsgPerSec:      pt.Rate(t.Received),
				ConsumeMBPerSec:           pt.Rate(t.ReceivedBytes) / bytesPerMB,
				Backlog:                   backlog,
				PublishLatencyMs:          detail(pt.Producer.PublishLatency),
				SendDelayMs:               detail(pt.Producer.SendDelay),
				CorrectedLatencyMs:        detail(pt.Producer.CorrectedLatency),
				EndToEndLatencyMs:         detail(pt.Consumer.EndToEnd),
				Lost:                      lostIn(placed, in.Delivery, pt.Producer.SeqEnds, from),
				Duplicates:                t.Duplicates,
			})
			for id, end := range pt.Producer.SeqEnds {
				from[id] = max(from[id], end)
			}
		}
	}
	return out
}

// lostIn is how many of the run's losses were sent between from and ends,
// over the producers; nil when they are not placed (no delivery record,
// or workers that did not record where their sequence numbers stood). A
// point without ends holds no producer worker's interval (one whose tick
// fell just before a phase change has one interval fewer there), so none
// of the sends: 0. Pure.
func lostIn(placed bool, d *Delivery, ends, from map[uint32]uint64) *int64 {
	if !placed {
		return nil
	}
	var n int64
	for id, end := range ends {
		n += stats.CountIn(d.LostRuns[id], from[id], end)
	}
	return &n
}

func subscriptions(m map[string]stats.Subscription) Subscriptions {
	out := Subscriptions{Count: len(m), Items: []SubscriptionCount{}}
	items := make([]SubscriptionCount, 0, len(m))
	for name, s := range m {
		items = append(items, SubscriptionCount{Name: name, CatchUp: s.CatchUp, Received: s.Received,
			ReceivedBytes: s.ReceivedBytes, Duplicates: s.Duplicates, Lost: s.Lost})
	}
	if len(items) == 0 {
		return out
	}
	sort.Slice(items, func(i, j int) bool { return items[i].Name < items[j].Name })
	out.MinReceived, out.MaxReceived = items[0].Received, items[0].Received
	for _, it := range items {
		out.MinReceived = min(out.MinReceived, it.Received)
		out.MaxReceived = max(out.MaxReceived, it.Received)
	}
	if len(items) <= MaxListedSubscriptions {
		out.Items = items
		return out
	}
	// Too many to list: the anomalous ones first (duplicates, losses), then
	// the lowest and highest receivers, which show any imbalance.
	rank := append([]SubscriptionCount(nil), items...)
	sort.SliceStable(rank, func(i, j int) bool {
		ai, aj := rank[i].Duplicates+rank[i].Lost > 0, rank[j].Duplicates+rank[j].Lost > 0
		if ai != aj {
			return ai
		}
		return rank[i].Received < rank[j].Received
	})
	anomalous := 0
	for anomalous < len(rank) && rank[anomalous].Duplicates+rank[anomalous].Lost > 0 {
		anomalous++
	}
	var pick []SubscriptionCount
	if anomalous >= MaxListedSubscriptions {
		pick = rank[:MaxListedSubscriptions]
	} else {
		pick = append(pick, rank[:anomalous]...)
		rest := rank[anomalous:]
		room := MaxListedSubscriptions - anomalous
		lo := room / 2
		pick = append(pick, rest[:lo]...)
		pick = append(pick, rest[len(rest)-(room-lo):]...)
	}
	sort.Slice(pick, func(i, j int) bool { return pick[i].Name < pick[j].Name })
	out.Items = pick
	return out
}

// SubscriptionsPerTopic is how many subscriptions must receive each
// acknowledged message (the coordinator's backlog on /metrics).
func SubscriptionsPerTopic(w v1alpha1.WorkloadSpec) int64 { return subscriptionsPerTopic(w) }
