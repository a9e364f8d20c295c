package report

import (
	"fmt"
	"maps"
	"math"
	"path"
	"slices"
	"strconv"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	dur "github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/stats"
)

// reportPage is what the report template shows.
type reportPage struct {
	Title     string
	Run       string
	System    string
	Workload  string
	Level     *levelBadge
	Period    string
	Generated string
	Warnings  []string
	Cards     []card
	Latency   []*chart
	Timeline  []*chart
	Drain     []*chart

	LatencyRows []latencyRow
	// ToolDelay says whose latency it is (ToolDelay.Sentence).
	ToolDelay  string
	Counts     []kv
	Phases     []phaseRow
	Durability *durabilityView
	WorkloadKV []kv
	Clocks     []results.ClockOffset
	Testbed    *v1alpha1.Testbed
	BrokerRes  *brokerResView
	Cost       *costView
	Brokers    *results.BrokerSetup
	Security   *securityView
	RateSearch *results.RateSearch
	Subs       *results.Subscriptions
	Truncation *results.Truncation
	Notes      []string
	Workers    []string
	// Repeats is a repeated run's figures over its repeats; nil for a run
	// not repeated.
	Repeats *repeatsView

	// Machines is the testbed's line on which nodes share a machine;
	// NodeMachine the id each node on a shared machine shares with the
	// others, shown beside it.
	Machines    *machinesView
	NodeMachine map[string]string

	// Faults is the run's faults and what each did; nil for a run
	// without spec.faults.
	Faults *faultsView

	// Against is how the run stands against its series (report
	// --history); nil without one.
	Against *againstView
}

// repeatsView is a repeated run's section: each tested figure's median in
// its interval beside every repeat's value, and the repeats' own reports.
type repeatsView struct {
	N       int
	Columns []string // "repeat 1", ... linking Links
	Links   []string
	Rows    []repeatsRow
	// Confidence is the intervals' coverage, said when below 95 %.
	Confidence float64
}

type repeatsRow struct {
	Figure, Median, Interval string
	Values                   []string
}

// repeatsOf is the repeats section of a repeated run's summary.
func repeatsOf(s *results.Summary) *repeatsView {
	if len(s.Repeats) == 0 {
		return nil
	}
	v := &repeatsView{N: len(s.Repeats)}
	for _, r := range s.Repeats {
		v.Columns = append(v.Columns, fmt.Sprintf("repeat %d", r.Index))
		v.Links = append(v.Links, path.Join(r.Dir, FileName))
	}
	for _, f := range results.Figures {
		iv, ok := s.Interval(f)
		if !f.Tested || !ok {
			continue
		}
		v.Confidence = iv.Confidence
		row := repeatsRow{Figure: f.Name, Median: strconv.FormatFloat(iv.Median, 'g', 4, 64),
			Interval: fmt.Sprintf("%s – %s", strconv.FormatFloat(iv.Low, 'g', 4, 64), strconv.FormatFloat(iv.High, 'g', 4, 64))}
		for _, r := range s.Repeats {
			if x, ok := f.Of(r.Results); ok {
				row.Values = append(row.Values, strconv.FormatFloat(x, 'g', 4, 64))
			} else {
				row.Values = append(row.Values, "–")
			}
		}
		v.Rows = append(v.Rows, row)
	}
	return v
}

type levelBadge struct {
	Achieved, Requested v1alpha1.Level
	Lowered             bool
	// Evidence is how the level was established (see durabilityView).
	Evidence string
}

type card struct {
	Label, Value, Unit, Sub string
	Bad                     bool
}

type kv struct {
	Key, Value string
	Bad        bool
}

type latencyRow struct {
	Name string
	Note string
	D    *results.LatencyDetail
}

type phaseRow struct {
	results.PhaseSummary
	PubP99, E2EP99 string
}

type durabilityView struct {
	*v1alpha1.EffectiveDurability
	// Evidence is "verified for <system> <version>" or "as configured,
	// not verified" (internal/durability.VerificationLabel).
	Evidence   string
	Components []component
}

type component struct {
	Name     string
	Settings []kv
}

func buildPage(s *results.Summary, omb *results.OMBResult) (*reportPage, error) {
	r := s.Results
	pg := &reportPage{
		Title:      fmt.Sprintf("%s — streambench report", nonEmpty(s.Run, "run")),
		Run:        nonEmpty(s.Run, "(unnamed run)"),
		System:     string(s.System),
		Workload:   s.Workload.Name,
		Generated:  time.Now().UTC().Format("2006-01-02 15:04 MST"),
		Clocks:     s.ClockOffsets,
		Testbed:    s.Testbed,
		BrokerRes:  brokerResources(s.BrokerResources),
		Cost:       costCard(s.Cost),
		RateSearch: s.RateSearch,
		Truncation: s.Truncation,
		Repeats:    repeatsOf(s),
		Notes:      s.Notes,
		Workers:    s.Workers,
	}
	if !s.Start.IsZero() {
		pg.Period = fmt.Sprintf("%s – %s (%s)", s.Start.UTC().Format("2006-01-02 15:04:05"), s.End.UTC().Format("15:04:05 MST"), s.End.Sub(s.Start).Round(time.Second))
	}
	if r.Partial {
		pg.Warnings = append(pg.Warnings, "Partial results: the run did not finish; the figures are what was measured before it stopped (see the notes for why)")
	}
	if d := s.Durability; d != nil {
		pg.Level = &levelBadge{Achieved: d.AchievedLevel, Requested: d.RequestedLevel, Lowered: d.AchievedLevel != d.RequestedLevel, Evidence: dur.VerificationLabel(d)}
		if pg.Level.Lowered {
			pg.Warnings = append(pg.Warnings, fmt.Sprintf("Durability level %d was requested but only level %d is achieved: %s", d.RequestedLevel, d.AchievedLevel, nonEmpty(d.Explanation, "see the durability table")))
		}
	}
	if r.Lost > 0 {
		pg.Warnings = append(pg.Warnings, fmt.Sprintf("%s acknowledged messages were lost (never delivered to every subscription).", count(r.Lost)))
	}
	pg.Machines, pg.NodeMachine = machinesOf(s.Testbed)
	sharedHost := sharedHostNode(s)
	if pg.BrokerRes != nil {
		pg.BrokerRes.Shared = sharedBrokerNodes(s)
		if sharedHost != "" {
			pg.BrokerRes.Notes = append(slices.Clip(pg.BrokerRes.Notes), sharedHost)
		}
	}
	if h := hostOf(s); h != nil && h.CPUBound {
		w := "Host CPU-bound: " + h.CPUVerdict
		if sharedHost != "" {
			w += "; " + sharedHost
		}
		pg.Warnings = append(pg.Warnings, w+".")
	}
	if r.NotConsumed > 0 {
		pg.Warnings = append(pg.Warnings, fmt.Sprintf("%s acknowledged messages were not consumed when the final drain ended: the consumers were still reading (slow, not lost), so the consume rate and end-to-end latency cover only what they read.", count(r.NotConsumed)))
	}
	if s.Truncation != nil {
		pg.Warnings = append(pg.Warnings, "The results were thinned to fit the ConfigMap; see Truncation at the end.")
	}

	pg.Brokers = s.Brokers
	pg.Security = securityOf(s)
	if w := securityWarning(s.Security); w != "" {
		pg.Warnings = append(pg.Warnings, w)
	}
	pg.Cards = headlineCards(s)
	pg.Faults = faultsSection(s)
	if err := addCharts(pg, s, omb); err != nil {
		return nil, err
	}

	measure := phase(s, stats.PhaseMeasure)
	if measure != nil {
		for _, l := range []latencyRow{
			{"Publish", "ack − send", measure.PublishLatencyMs},
			{"Publish, corrected", "ack − intended send (no coordinated omission)", measure.CorrectedLatencyMs},
			{"Send delay", "send − intended send", measure.SendDelayMs},
			{"End-to-end", "receive − send timestamp", measure.EndToEndLatencyMs},
			{"End-to-end, catch-up", "catch-up subscriptions", measure.CatchUpEndToEndLatencyMs},
		} {
			if l.D != nil {
				pg.LatencyRows = append(pg.LatencyRows, l)
			}
		}
	}
	if d, ok := ToolDelayOf(s); ok {
		pg.ToolDelay = d.Sentence(DefaultFairness)
	}
	if d := phase(s, stats.PhaseDrain); d != nil {
		if d.PublishLatencyMs != nil {
			pg.LatencyRows = append(pg.LatencyRows, latencyRow{"Publish during drain", "drain phase", d.PublishLatencyMs})
		}
		if d.CatchUpEndToEndLatencyMs != nil {
			pg.LatencyRows = append(pg.LatencyRows, latencyRow{"End-to-end, catch-up, drain", "drain phase", d.CatchUpEndToEndLatencyMs})
		}
	}
	if len(pg.LatencyRows) == 0 {
		// A summary without phases (hand-made, or an older coordinator):
		// the headline still has the numbers.
		pg.LatencyRows = append(pg.LatencyRows, latencyRow{"Publish", "ack − send", fromSummary(&r.PublishLatencyMs)})
		if r.EndToEndLatencyMs != nil {
			pg.LatencyRows = append(pg.LatencyRows, latencyRow{"End-to-end", "receive − send timestamp", fromSummary(r.EndToEndLatencyMs)})
		}
	}

	var pubErrors int64
	for _, p := range s.Phases {
		pubErrors += p.PublishErrors
	}
	pg.Counts = []kv{
		{Key: "Sent", Value: count(r.Sent)},
		{Key: "Acknowledged", Value: count(r.Acked)},
		{Key: "Publish errors", Value: count(pubErrors), Bad: pubErrors > 0},
		{Key: "Received (all subscriptions)", Value: count(r.Received)},
		{Key: "Lost", Value: count(r.Lost), Bad: r.Lost > 0},
		{Key: "Not consumed (backlog at the end)", Value: count(r.NotConsumed), Bad: r.NotConsumed > 0},
		{Key: "Duplicates", Value: count(s.Duplicates), Bad: s.Duplicates > 0},
	}
	for _, p := range s.Phases {
		row := phaseRow{PhaseSummary: p, PubP99: "–", E2EP99: "–"}
		if p.PublishLatencyMs != nil {
			row.PubP99 = ms(p.PublishLatencyMs.P99)
		}
		if p.EndToEndLatencyMs != nil {
			row.E2EP99 = ms(p.EndToEndLatencyMs.P99)
		}
		pg.Phases = append(pg.Phases, row)
	}
	if s.Durability != nil {
		pg.Durability = durability(s.Durability)
	}
	pg.WorkloadKV = workloadKV(s.Workload)
	if s.Subscriptions.Count > 0 {
		pg.Subs = &s.Subscriptions
	}
	return pg, nil
}

func headlineCards(s *results.Summary) []card {
	r := s.Results
	cards := []card{
		{Label: "Publish rate", Value: count(int64(math.Round(r.PublishRateMsgPerSec))), Unit: "msg/s", Sub: mbps(r.PublishMBPerSec) + " MB/s"},
		{Label: "Consume rate", Value: mbps(r.ConsumeMBPerSec), Unit: "MB/s", Sub: "all subscriptions"},
		{Label: "Publish p99", Value: ms(r.PublishLatencyMs.P99), Unit: "ms", Sub: "ack − send · p50 " + ms(r.PublishLatencyMs.P50) + " ms"},
	}
	if c := correctedOf(s); c != nil {
		// Beside the publish latency, so a slipped schedule (coordinated
		// omission) cannot hide behind it.
		cards = append(cards, card{Label: "Corrected p99", Value: ms(c.P99), Unit: "ms", Sub: "ack − intended send · p50 " + ms(c.P50) + " ms"})
	}
	if e := r.EndToEndLatencyMs; e != nil {
		cards = append(cards, card{Label: "End-to-end p99", Value: ms(e.P99), Unit: "ms", Sub: "p50 " + ms(e.P50) + " ms"})
	}
	if c := r.CatchUp; c != nil {
		cards = append(cards, card{Label: "Backlog drain", Value: mbps(c.DrainMBPerSec), Unit: "MB/s", Sub: fmt.Sprintf("in %.1f s", c.DrainSeconds)})
	}
	cards = append(cards, card{Label: "Lost / duplicates", Value: count(r.Lost) + " / " + count(s.Duplicates), Sub: "of " + count(r.Acked) + " acked", Bad: r.Lost > 0 || s.Duplicates > 0})
	if r.NotConsumed > 0 {
		cards = append(cards, card{Label: "Not consumed", Value: count(r.NotConsumed), Sub: "backlog at the end: slow, not lost", Bad: true})
	}
	return cards
}

func phase(s *results.Summary, ph stats.Phase) *results.PhaseSummary {
	for i := range s.Phases {
		if s.Phases[i].Phase == ph {
			return &s.Phases[i]
		}
	}
	return nil
}

// correctedOf is the headline's corrected publish latency (ack - intended
// send), or the measured phase's for a summary written before the headline
// had it; nil when neither has one.
func correctedOf(s *results.Summary) *v1alpha1.LatencySummary {
	if c := s.Results.CorrectedLatencyMs; c != nil {
		return c
	}
	if m := phase(s, stats.PhaseMeasure); m != nil && m.CorrectedLatencyMs != nil {
		d := m.CorrectedLatencyMs
		return &v1alpha1.LatencySummary{Avg: d.Avg, P50: d.P50, P99: d.P99, P999: d.P999, P9999: d.P9999, Max: d.Max}
	}
	return nil
}

func fromSummary(l *v1alpha1.LatencySummary) *results.LatencyDetail {
	nan := math.NaN()
	return &results.LatencyDetail{Avg: l.Avg, P50: l.P50, P75: nan, P95: nan, P99: l.P99, P999: l.P999, P9999: l.P9999, Max: l.Max, Count: -1}
}

func durability(d *v1alpha1.EffectiveDurability) *durabilityView {
	v := &durabilityView{EffectiveDurability: d, Evidence: dur.VerificationLabel(d)}
	if k := d.Kafka; k != nil {
		v.Components = append(v.Components,
			component{"Kafka topics", append([]kv{{Key: "replication factor", Value: fmt.Sprint(k.ReplicationFactor)}}, sortedKV(k.Topic)...)},
			component{"Kafka producers", sortedKV(k.Producer)},
			component{"Kafka brokers", sortedKV(k.Broker)})
	}
	if p := d.Pulsar; p != nil {
		v.Components = append(v.Components,
			component{"Pulsar namespace persistence", []kv{
				{Key: "ensemble size", Value: fmt.Sprint(p.EnsembleSize)},
				{Key: "write quorum", Value: fmt.Sprint(p.WriteQuorum)},
				{Key: "ack quorum", Value: fmt.Sprint(p.AckQuorum)},
			}},
			component{"Pulsar bookies", sortedKV(p.Bookie)},
			component{"Pulsar brokers", sortedKV(p.Broker)})
	}
	return v
}

func sortedKV(m map[string]string) []kv {
	out := make([]kv, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, kv{Key: k, Value: m[k]})
	}
	return out
}

func workloadKV(w v1alpha1.WorkloadSpec) []kv {
	out := []kv{
		{Key: "name", Value: nonEmpty(w.Name, "–")},
		{Key: "topics", Value: fmt.Sprint(w.Topics)},
		{Key: "partitions per topic", Value: fmt.Sprint(w.PartitionsPerTopic)},
		{Key: "message size", Value: count(int64(w.MessageSize)) + " bytes"},
	}
	rate := "maximum (rate search)"
	if w.ProducerRate > 0 {
		rate = count(w.ProducerRate) + " msg/s"
	}
	out = append(out, kv{Key: "producer rate", Value: rate},
		kv{Key: "producers per topic", Value: fmt.Sprint(w.ProducersPerTopic)})
	if w.SubscriptionsPerTopic != nil {
		out = append(out, kv{Key: "subscriptions per topic", Value: fmt.Sprint(*w.SubscriptionsPerTopic)})
	}
	out = append(out, kv{Key: "consumers per subscription", Value: fmt.Sprint(w.ConsumerPerSubscription)})
	if w.KeyDistributor != "" {
		out = append(out, kv{Key: "key distributor", Value: string(w.KeyDistributor)})
	}
	if w.PayloadFile != "" {
		v := w.PayloadFile
		if w.UseRandomizedPayloads {
			v += " (not read: randomized payloads win, as in OMB)"
		}
		out = append(out, kv{Key: "payload file", Value: v})
	}
	if w.UseRandomizedPayloads {
		v := "yes"
		if w.RandomBytesRatio != nil {
			v += fmt.Sprintf(", random bytes ratio %g", *w.RandomBytesRatio)
		}
		if w.RandomizedPayloadPoolSize != nil {
			v += fmt.Sprintf(", pool %d", *w.RandomizedPayloadPoolSize)
		}
		out = append(out, kv{Key: "randomized payloads", Value: v})
	}
	if w.WarmupDurationMinutes != nil {
		out = append(out, kv{Key: "warm-up", Value: minutes(*w.WarmupDurationMinutes)})
	}
	if w.TestDurationMinutes != nil {
		out = append(out, kv{Key: "test duration", Value: minutes(*w.TestDurationMinutes)})
	}
	if w.ConsumerBacklogSizeGB != nil && *w.ConsumerBacklogSizeGB > 0 {
		out = append(out, kv{Key: "consumer backlog", Value: fmt.Sprintf("%g GiB", *w.ConsumerBacklogSizeGB)})
	}
	if w.BacklogDrainRatio != nil {
		out = append(out, kv{Key: "backlog drain ratio", Value: fmt.Sprintf("%g", *w.BacklogDrainRatio)})
	}
	if w.Mixed != nil {
		out = append(out, kv{Key: "mixed: catch-up subscriptions per topic", Value: fmt.Sprint(w.Mixed.CatchUpSubscriptionsPerTopic)})
	}
	return out
}
