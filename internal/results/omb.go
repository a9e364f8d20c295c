package results

import (
	"bytes"
	"encoding/json"
	"math"
	"sort"
	"strconv"

	"github.com/streambench/streambench-operator/internal/stats"
)

// OMBResult is OMB's TestResult (benchmark-framework TestResult.java), field
// for field, so OMB's bin/create_charts.py and other tooling read it. Units
// are OMB's: publish and end-to-end latency in ms, publish delay (our send
// delay) in µs, rates in msg/s. Lists hold one entry per 10 s interval of
// the measured phase (or per merged group of intervals when the results had
// to be thinned, see Summary.Truncation). OMB stores no byte throughput;
// the summary does.
type OMBResult struct {
	Workload          string `json:"workload"`
	Driver            string `json:"driver"`
	MessageSize       int64  `json:"messageSize"`
	Topics            int    `json:"topics"`
	Partitions        int    `json:"partitions"`
	ProducersPerTopic int    `json:"producersPerTopic"`
	ConsumersPerTopic int    `json:"consumersPerTopic"`

	PublishRate      []float64 `json:"publishRate"`
	PublishErrorRate []float64 `json:"publishErrorRate"`
	ConsumeRate      []float64 `json:"consumeRate"`
	Backlog          []int64   `json:"backlog"`

	PublishLatencyAvg      []float64 `json:"publishLatencyAvg"`
	PublishLatency50pct    []float64 `json:"publishLatency50pct"`
	PublishLatency75pct    []float64 `json:"publishLatency75pct"`
	PublishLatency95pct    []float64 `json:"publishLatency95pct"`
	PublishLatency99pct    []float64 `json:"publishLatency99pct"`
	PublishLatency999pct   []float64 `json:"publishLatency999pct"`
	PublishLatency9999pct  []float64 `json:"publishLatency9999pct"`
	PublishLatency99999pct []float64 `json:"publishLatency99999pct"`
	PublishLatencyMax      []float64 `json:"publishLatencyMax"`

	PublishDelayLatencyAvg      []float64 `json:"publishDelayLatencyAvg"`
	PublishDelayLatency50pct    []int64   `json:"publishDelayLatency50pct"`
	PublishDelayLatency75pct    []int64   `json:"publishDelayLatency75pct"`
	PublishDelayLatency95pct    []int64   `json:"publishDelayLatency95pct"`
	PublishDelayLatency99pct    []int64   `json:"publishDelayLatency99pct"`
	PublishDelayLatency999pct   []int64   `json:"publishDelayLatency999pct"`
	PublishDelayLatency9999pct  []int64   `json:"publishDelayLatency9999pct"`
	PublishDelayLatency99999pct []int64   `json:"publishDelayLatency99999pct"`
	PublishDelayLatencyMax      []int64   `json:"publishDelayLatencyMax"`

	AggregatedPublishLatencyAvg      float64 `json:"aggregatedPublishLatencyAvg"`
	AggregatedPublishLatency50pct    float64 `json:"aggregatedPublishLatency50pct"`
	AggregatedPublishLatency75pct    float64 `json:"aggregatedPublishLatency75pct"`
	AggregatedPublishLatency95pct    float64 `json:"aggregatedPublishLatency95pct"`
	AggregatedPublishLatency99pct    float64 `json:"aggregatedPublishLatency99pct"`
	AggregatedPublishLatency999pct   float64 `json:"aggregatedPublishLatency999pct"`
	AggregatedPublishLatency9999pct  float64 `json:"aggregatedPublishLatency9999pct"`
	AggregatedPublishLatency99999pct float64 `json:"aggregatedPublishLatency99999pct"`
	AggregatedPublishLatencyMax      float64 `json:"aggregatedPublishLatencyMax"`

	AggregatedPublishDelayLatencyAvg      float64 `json:"aggregatedPublishDelayLatencyAvg"`
	AggregatedPublishDelayLatency50pct    int64   `json:"aggregatedPublishDelayLatency50pct"`
	AggregatedPublishDelayLatency75pct    int64   `json:"aggregatedPublishDelayLatency75pct"`
	AggregatedPublishDelayLatency95pct    int64   `json:"aggregatedPublishDelayLatency95pct"`
	AggregatedPublishDelayLatency99pct    int64   `json:"aggregatedPublishDelayLatency99pct"`
	AggregatedPublishDelayLatency999pct   int64   `json:"aggregatedPublishDelayLatency999pct"`
	AggregatedPublishDelayLatency9999pct  int64   `json:"aggregatedPublishDelayLatency9999pct"`
	AggregatedPublishDelayLatency99999pct int64   `json:"aggregatedPublishDelayLatency99999pct"`
	AggregatedPublishDelayLatencyMax      int64   `json:"aggregatedPublishDelayLatencyMax"`

	// Quantile maps: percentile -> value; keys are written as Java writes a
	// Double ("50.0", "99.99"), as OMB's Jackson output does.
	AggregatedPublishLatencyQuantiles      QuantileMap `json:"aggregatedPublishLatencyQuantiles"`
	AggregatedPublishDelayLatencyQuantiles QuantileMap `json:"aggregatedPublishDelayLatencyQuantiles"`

	EndToEndLatencyAvg      []float64 `json:"endToEndLatencyAvg"`
	EndToEndLatency50pct    []float64 `json:"endToEndLatency50pct"`
	EndToEndLatency75pct    []float64 `json:"endToEndLatency75pct"`
	EndToEndLatency95pct    []float64 `json:"endToEndLatency95pct"`
	EndToEndLatency99pct    []float64 `json:"endToEndLatency99pct"`
	EndToEndLatency999pct   []float64 `json:"endToEndLatency999pct"`
	EndToEndLatency9999pct  []float64 `json:"endToEndLatency9999pct"`
	EndToEndLatency99999pct []float64 `json:"endToEndLatency99999pct"`
	EndToEndLatencyMax      []float64 `json:"endToEndLatencyMax"`

	AggregatedEndToEndLatencyQuantiles QuantileMap `json:"aggregatedEndToEndLatencyQuantiles"`

	AggregatedEndToEndLatencyAvg      float64 `json:"aggregatedEndToEndLatencyAvg"`
	AggregatedEndToEndLatency50pct    float64 `json:"aggregatedEndToEndLatency50pct"`
	AggregatedEndToEndLatency75pct    float64 `json:"aggregatedEndToEndLatency75pct"`
	AggregatedEndToEndLatency95pct    float64 `json:"aggregatedEndToEndLatency95pct"`
	AggregatedEndToEndLatency99pct    float64 `json:"aggregatedEndToEndLatency99pct"`
	AggregatedEndToEndLatency999pct   float64 `json:"aggregatedEndToEndLatency999pct"`
	AggregatedEndToEndLatency9999pct  float64 `json:"aggregatedEndToEndLatency9999pct"`
	AggregatedEndToEndLatency99999pct float64 `json:"aggregatedEndToEndLatency99999pct"`
	AggregatedEndToEndLatencyMax      float64 `json:"aggregatedEndToEndLatencyMax"`
}

// QuantileMap is percentile -> value, marshalled in ascending percentile
// order with Java Double keys.
type QuantileMap map[float64]float64

// MarshalJSON writes {"1.0": v, ..., "99.99": v, "100.0": v}.
func (q QuantileMap) MarshalJSON() ([]byte, error) {
	keys := make([]float64, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Float64s(keys)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(javaDouble(k)))
		b.WriteByte(':')
		v, err := json.Marshal(q[k])
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads what MarshalJSON (or OMB) wrote.
func (q *QuantileMap) UnmarshalJSON(data []byte) error {
	var m map[string]float64
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	*q = QuantileMap{}
	for k, v := range m {
		f, err := strconv.ParseFloat(k, 64)
		if err != nil {
			return err
		}
		(*q)[f] = v
	}
	return nil
}

// javaDouble formats f as Java's Double.toString does for ordinary
// magnitudes: shortest digits, at least one decimal ("50.0", "99.99").
func javaDouble(f float64) string {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if math.Trunc(f) == f {
		s += ".0"
	}
	return s
}

// latencyPercentiles are OMB's per-interval and aggregated percentiles.
var latencyPercentiles = []float64{50, 75, 95, 99, 99.9, 99.99, 99.999}

func quantileMap(h *stats.Histogram, scale float64) QuantileMap {
	m := QuantileMap{}
	for _, p := range h.Curve() {
		m[p.Percentile] = float64(p.Micros) / scale
	}
	return m
}

// BuildOMB computes the OMB-compatible result of a run.
func BuildOMB(in Input) (*OMBResult, error) {
	p, err := prepare(in)
	if err != nil {
		return nil, err
	}
	return p.omb(1), nil
}

func (p *prepared) omb(stride int) *OMBResult {
	in := p.in
	w := in.Workload
	driver := in.Driver
	if driver == "" {
		driver = string(in.System)
	}
	r := &OMBResult{
		Workload: w.Name, Driver: driver, MessageSize: int64(w.MessageSize),
		Topics: int(w.Topics), Partitions: int(w.PartitionsPerTopic),
		ProducersPerTopic: int(w.ProducersPerTopic), ConsumersPerTopic: int(w.ConsumerPerSubscription),
	}
	subs := subscriptionsPerTopic(w)
	// OMB's backlog counts from the start of the run, as ours does.
	var acked, received int64
	for _, ph := range p.phases {
		if ph == stats.PhaseMeasure {
			break
		}
		a := p.aggs[ph]
		acked += a.Producer.Acked
		t := a.Consumer.Total()
		received += t.Received - t.Duplicates
	}
	for _, pt := range p.phaseSeries(stats.PhaseMeasure, stride) {
		t := pt.Consumer.Total()
		acked += pt.Producer.Acked
		received += t.Received - t.Duplicates
		r.PublishRate = append(r.PublishRate, pt.Rate(pt.Producer.Acked))
		r.PublishErrorRate = append(r.PublishErrorRate, pt.Rate(pt.Producer.PublishErrors))
		r.ConsumeRate = append(r.ConsumeRate, pt.Rate(t.Received))
		r.Backlog = append(r.Backlog, max(0, acked*subs-received))

		pl := pt.Producer.PublishLatency.Quantiles()
		pv := percentilesOf(pt.Producer.PublishLatency)
		r.PublishLatencyAvg = append(r.PublishLatencyAvg, pl.Avg/1000)
		r.PublishLatency50pct = append(r.PublishLatency50pct, ms(pv[0]))
		r.PublishLatency75pct = append(r.PublishLatency75pct, ms(pv[1]))
		r.PublishLatency95pct = append(r.PublishLatency95pct, ms(pv[2]))
		r.PublishLatency99pct = append(r.PublishLatency99pct, ms(pv[3]))
		r.PublishLatency999pct = append(r.PublishLatency999pct, ms(pv[4]))
		r.PublishLatency9999pct = append(r.PublishLatency9999pct, ms(pv[5]))
		r.PublishLatency99999pct = append(r.PublishLatency99999pct, ms(pv[6]))
		r.PublishLatencyMax = append(r.PublishLatencyMax, ms(pl.Max))

		dl := pt.Producer.SendDelay.Quantiles()
		dv := percentilesOf(pt.Producer.SendDelay)
		r.PublishDelayLatencyAvg = append(r.PublishDelayLatencyAvg, dl.Avg)
		r.PublishDelayLatency50pct = append(r.PublishDelayLatency50pct, dv[0])
		r.PublishDelayLatency75pct = append(r.PublishDelayLatency75pct, dv[1])
		r.PublishDelayLatency95pct = append(r.PublishDelayLatency95pct, dv[2])
		r.PublishDelayLatency99pct = append(r.PublishDelayLatency99pct, dv[3])
		r.PublishDelayLatency999pct = append(r.PublishDelayLatency999pct, dv[4])
		r.PublishDelayLatency9999pct = append(r.PublishDelayLatency9999pct, dv[5])
		r.PublishDelayLatency99999pct = append(r.PublishDelayLatency99999pct, dv[6])
		r.PublishDelayLatencyMax = append(r.PublishDelayLatencyMax, dl.Max)

		el := pt.Consumer.EndToEnd.Quantiles()
		ev := percentilesOf(pt.Consumer.EndToEnd)
		r.EndToEndLatencyAvg = append(r.EndToEndLatencyAvg, el.Avg/1000)
		r.EndToEndLatency50pct = append(r.EndToEndLatency50pct, ms(ev[0]))
		r.EndToEndLatency75pct = append(r.EndToEndLatency75pct, ms(ev[1]))
		r.EndToEndLatency95pct = append(r.EndToEndLatency95pct, ms(ev[2]))
		r.EndToEndLatency99pct = append(r.EndToEndLatency99pct, ms(ev[3]))
		r.EndToEndLatency999pct = append(r.EndToEndLatency999pct, ms(ev[4]))
		r.EndToEndLatency9999pct = append(r.EndToEndLatency9999pct, ms(ev[5]))
		r.EndToEndLatency99999pct = append(r.EndToEndLatency99999pct, ms(ev[6]))
		r.EndToEndLatencyMax = append(r.EndToEndLatencyMax, ms(el.Max))
	}

	m := p.aggs[stats.PhaseMeasure]
	pl, pv := m.Producer.PublishLatency.Quantiles(), percentilesOf(m.Producer.PublishLatency)
	r.AggregatedPublishLatencyAvg = pl.Avg / 1000
	r.AggregatedPublishLatency50pct, r.AggregatedPublishLatency75pct = ms(pv[0]), ms(pv[1])
	r.AggregatedPublishLatency95pct, r.AggregatedPublishLatency99pct = ms(pv[2]), ms(pv[3])
	r.AggregatedPublishLatency999pct, r.AggregatedPublishLatency9999pct = ms(pv[4]), ms(pv[5])
	r.AggregatedPublishLatency99999pct, r.AggregatedPublishLatencyMax = ms(pv[6]), ms(pl.Max)

	dl, dv := m.Producer.SendDelay.Quantiles(), percentilesOf(m.Producer.SendDelay)
	r.AggregatedPublishDelayLatencyAvg = dl.Avg
	r.AggregatedPublishDelayLatency50pct, r.AggregatedPublishDelayLatency75pct = dv[0], dv[1]
	r.AggregatedPublishDelayLatency95pct, r.AggregatedPublishDelayLatency99pct = dv[2], dv[3]
	r.AggregatedPublishDelayLatency999pct, r.AggregatedPublishDelayLatency9999pct = dv[4], dv[5]
	r.AggregatedPublishDelayLatency99999pct, r.AggregatedPublishDelayLatencyMax = dv[6], dl.Max

	el, ev := m.Consumer.EndToEnd.Quantiles(), percentilesOf(m.Consumer.EndToEnd)
	r.AggregatedEndToEndLatencyAvg = el.Avg / 1000
	r.AggregatedEndToEndLatency50pct, r.AggregatedEndToEndLatency75pct = ms(ev[0]), ms(ev[1])
	r.AggregatedEndToEndLatency95pct, r.AggregatedEndToEndLatency99pct = ms(ev[2]), ms(ev[3])
	r.AggregatedEndToEndLatency999pct, r.AggregatedEndToEndLatency9999pct = ms(ev[4]), ms(ev[5])
	r.AggregatedEndToEndLatency99999pct, r.AggregatedEndToEndLatencyMax = ms(ev[6]), ms(el.Max)

	r.AggregatedPublishLatencyQuantiles = quantileMap(m.Producer.PublishLatency, 1000)
	r.AggregatedPublishDelayLatencyQuantiles = quantileMap(m.Producer.SendDelay, 1)
	r.AggregatedEndToEndLatencyQuantiles = quantileMap(m.Consumer.EndToEnd, 1000)
	return r
}

func percentilesOf(h *stats.Histogram) []int64 {
	out := make([]int64, len(latencyPercentiles))
	for i, p := range latencyPercentiles {
		out[i] = h.ValueAtPercentile(p)
	}
	return out
}
