// Package metrics serves what the workers and the coordinator measure on
// /metrics in the Prometheus text format (client_golang), so a
// kube-prometheus-stack Prometheus scrapes a run live and the dashboards
// in charts/streambench draw it.
//
// The figures are the workers' interval snapshots, added up as they are
// cut (every snapshot interval, 10 s by default): the same HDR histograms
// the results are computed from, laid out in fixed Prometheus buckets, so
// /metrics never disagrees with the results and costs nothing on the send
// path. They lag by at most one interval.
package metrics

import (
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/streambench/streambench-operator/internal/stats"
)

// Metric names; the dashboards and their test use these.
const (
	MessagesSent          = "streambench_messages_sent_total"
	MessagesAcked         = "streambench_messages_acked_total"
	BytesAcked            = "streambench_bytes_acked_total"
	PublishErrors         = "streambench_publish_errors_total"
	MessagesReceived      = "streambench_messages_received_total"
	BytesReceived         = "streambench_bytes_received_total"
	Duplicates            = "streambench_duplicates_total"
	PublishLatency        = "streambench_publish_latency_seconds"
	SendDelay             = "streambench_send_delay_seconds"
	EndToEndLatency       = "streambench_end_to_end_latency_seconds"
	Phase                 = "streambench_phase"
	Backlog               = "streambench_backlog_messages"
	SubscriptionsPerTopic = "streambench_subscriptions_per_topic"
)

// LatencyBuckets are the upper bounds (seconds) of the latency
// histograms: from 0.5 ms, where a local broker's publish latency starts,
// to 10 s, beyond which a benchmark has failed anyway.
var LatencyBuckets = []float64{0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10}

// totals are one worker's figures since its run was initialized.
type totals struct {
	sent, acked, ackedBytes, errors     int64
	received, receivedBytes, duplicates int64
	publish, sendDelay, endToEnd        *stats.Histogram
	phase                               stats.Phase
}

// Collector holds the run's cumulative figures and is a
// prometheus.Collector. Safe for concurrent use.
type Collector struct {
	mu      sync.Mutex
	run     string
	workers map[string]*totals
	phase   stats.Phase
	// Coordinator-only: the backlog over all workers.
	subsPerTopic int64
	backlog      *int64
	ackedAll     int64
	receivedAll  int64

	descs map[string]*prometheus.Desc
}

// New returns an empty collector.
func New() *Collector {
	c := &Collector{workers: map[string]*totals{}, descs: map[string]*prometheus.Desc{}}
	l := []string{"run", "worker"}
	for name, help := range map[string]string{
		MessagesSent:     "Messages handed to the broker client.",
		MessagesAcked:    "Messages the broker acknowledged.",
		BytesAcked:       "Payload bytes the broker acknowledged.",
		PublishErrors:    "Messages whose send failed.",
		MessagesReceived: "Messages delivered to the consumers, duplicates included.",
		BytesReceived:    "Payload bytes delivered to the consumers.",
		Duplicates:       "Deliveries of an already received message.",
		PublishLatency:   "Publish latency (ack - send), seconds.",
		SendDelay:        "Send delay (send - intended send on the rate schedule), seconds: the load generator's lateness.",
		EndToEndLatency:  "End-to-end latency (receive - send timestamp in the payload) of the tailing subscriptions, seconds.",
	} {
		c.descs[name] = prometheus.NewDesc(name, help, l, nil)
	}
	c.descs[Phase] = prometheus.NewDesc(Phase, "1 for the run's current phase (warmup, measure, backlog-build, drain, cooldown...).", []string{"run", "phase"}, nil)
	c.descs[Backlog] = prometheus.NewDesc(Backlog, "Messages acknowledged but not yet received, summed over every subscription (coordinator).", []string{"run"}, nil)
	c.descs[SubscriptionsPerTopic] = prometheus.NewDesc(SubscriptionsPerTopic, "Subscriptions that must receive each acknowledged message (coordinator).", []string{"run"}, nil)
	return c
}

// Reset starts a new run: the figures of the previous one are dropped
// (their series end; the new run has its own label).
func (c *Collector) Reset(run string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.run, c.workers, c.phase = run, map[string]*totals{}, ""
	c.backlog, c.ackedAll, c.receivedAll = nil, 0, 0
}

// SetSubscriptionsPerTopic makes the collector report the backlog: each
// acknowledged message must reach n subscriptions (the coordinator).
func (c *Collector) SetSubscriptionsPerTopic(n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.subsPerTopic = n
	var zero int64
	c.backlog = &zero
}

// Add adds snapshots, each exactly once (a worker's as it cuts them, the
// coordinator's as it collects them).
func (c *Collector) Add(snaps ...stats.Snapshot) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range snaps {
		t := c.workers[s.Worker]
		if t == nil {
			t = &totals{publish: stats.NewHistogram(), sendDelay: stats.NewHistogram(), endToEnd: stats.NewHistogram()}
			c.workers[s.Worker] = t
		}
		p := s.Producer
		t.sent += p.Sent
		t.acked += p.Acked
		t.ackedBytes += p.AckedBytes
		t.errors += p.PublishErrors
		tot := s.Consumer.Total()
		t.received += tot.Received
		t.receivedBytes += tot.ReceivedBytes
		t.duplicates += tot.Duplicates
		t.publish.Merge(p.PublishLatency)
		t.sendDelay.Merge(p.SendDelay)
		t.endToEnd.Merge(s.Consumer.EndToEnd)
		t.phase = s.Phase
		// The phase of the newest interval; a worker then sets the phase
		// it is in now (SetPhase).
		c.phase = s.Phase
		c.ackedAll += p.Acked
		c.receivedAll += tot.Received - tot.Duplicates
	}
	if c.backlog != nil {
		b := c.ackedAll*c.subsPerTopic - c.receivedAll
		c.backlog = &b
	}
}

// SetPhase records the run's current phase (a worker's SetPhase).
func (c *Collector) SetPhase(p stats.Phase) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.phase = p
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.run == "" {
		return
	}
	counter := func(name string, v int64, worker string) {
		ch <- prometheus.MustNewConstMetric(c.descs[name], prometheus.CounterValue, float64(v), c.run, worker)
	}
	for w, t := range c.workers {
		if c.backlog != nil {
			// The coordinator reports the backlog only; the workers
			// report their own counts, so sums over workers stay right.
			break
		}
		counter(MessagesSent, t.sent, w)
		counter(MessagesAcked, t.acked, w)
		counter(BytesAcked, t.ackedBytes, w)
		counter(PublishErrors, t.errors, w)
		counter(MessagesReceived, t.received, w)
		counter(BytesReceived, t.receivedBytes, w)
		counter(Duplicates, t.duplicates, w)
		ch <- histogram(c.descs[PublishLatency], t.publish, c.run, w)
		ch <- histogram(c.descs[SendDelay], t.sendDelay, c.run, w)
		ch <- histogram(c.descs[EndToEndLatency], t.endToEnd, c.run, w)
	}
	if c.phase != "" {
		ch <- prometheus.MustNewConstMetric(c.descs[Phase], prometheus.GaugeValue, 1, c.run, string(c.phase))
	}
	if c.backlog != nil {
		ch <- prometheus.MustNewConstMetric(c.descs[Backlog], prometheus.GaugeValue, float64(*c.backlog), c.run)
		ch <- prometheus.MustNewConstMetric(c.descs[SubscriptionsPerTopic], prometheus.GaugeValue, float64(c.subsPerTopic), c.run)
	}
}

// histogram lays an HDR histogram (µs) out in LatencyBuckets (seconds).
// Values clamped to 0 (clock skew) fall in the first bucket.
func histogram(d *prometheus.Desc, h *stats.Histogram, labels ...string) prometheus.Metric {
	counts := make([]uint64, len(LatencyBuckets))
	var total uint64
	h.ForEachBucket(func(us, n int64) {
		total += uint64(n)
		s := float64(us) / 1e6
		for i, b := range LatencyBuckets {
			if s <= b {
				counts[i] += uint64(n)
				break
			}
		}
	})
	buckets := make(map[float64]uint64, len(LatencyBuckets))
	var cum uint64
	for i, b := range LatencyBuckets {
		cum += counts[i]
		buckets[b] = cum
	}
	sum := h.Mean() / 1e6 * float64(total)
	return prometheus.MustNewConstHistogram(d, total, sum, buckets, labels...)
}

// Handler serves the collector (and nothing else: the Go runtime's
// metrics are not what a benchmark dashboard needs) on /metrics, without
// authentication, as Prometheus scrapes it.
func (c *Collector) Handler() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}
