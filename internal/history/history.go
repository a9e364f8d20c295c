// Package history groups finished runs into series of one configuration
// and finds where each series' figures changed (issue 61). Pure: summaries
// in, series with change points out; reading an archive is the caller's.
//
// Two runs are of one configuration when what makes their figures
// comparable is the same (Config): the system and its version, the
// durability achieved, the topology and the brokers' envelopes, the
// workload, the client security and the testbed's class. A changed setting
// starts another series, so a change point inside a series is a change of
// the figures, not of the setup.
package history

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/changepoint"
	"github.com/streambench/streambench-operator/internal/results"
)

// Config is what makes runs comparable: runs with the same Config form a
// series.
type Config struct {
	System        v1alpha1.System `json:"system"`
	BrokerVersion string          `json:"brokerVersion,omitempty"`
	// Durability achieved: the level and what gives it (replication
	// factor, quorums, the broker and topic settings).
	Level  v1alpha1.Level             `json:"level,omitempty"`
	Kafka  *v1alpha1.KafkaDurability  `json:"kafka,omitempty"`
	Pulsar *v1alpha1.PulsarDurability `json:"pulsar,omitempty"`
	// Topology: broker and bookie counts and each component's envelope.
	Brokers    int32                        `json:"brokers,omitempty"`
	Bookies    int32                        `json:"bookies,omitempty"`
	Components []v1alpha1.ComponentEnvelope `json:"components,omitempty"`
	// Workload, whole but for its name (a renamed workload is the same
	// load).
	Workload v1alpha1.WorkloadSpec `json:"workload"`
	// Security: the protocol and mechanism the clients used.
	Security string `json:"security,omitempty"`
	// Testbed is its scope (local host, broker nodes, worker nodes) and
	// how many machines held the nodes.
	Testbed string `json:"testbed,omitempty"`
}

// ConfigOf is a run's configuration.
func ConfigOf(s *results.Summary) Config {
	c := Config{System: s.System, Workload: s.Workload}
	c.Workload.Name = ""
	if d := s.Durability; d != nil {
		c.BrokerVersion, c.Level, c.Kafka, c.Pulsar = d.BrokerVersion, d.AchievedLevel, d.Kafka, d.Pulsar
	}
	if tb := s.Testbed; tb != nil {
		c.Testbed = string(tb.Scope)
		if m := tb.Machines; m != nil {
			c.Testbed += fmt.Sprintf(", %d nodes on %d machines", m.Nodes, m.Machines)
		}
		if t := tb.Topology; t != nil {
			c.Brokers, c.Bookies, c.Components = t.Brokers, t.Bookies, t.Components
			if c.BrokerVersion == "" {
				c.BrokerVersion = t.Version
			}
		}
	}
	if sec := s.Security; sec != nil {
		c.Security = sec.Protocol
		if sec.Mechanism != "" {
			c.Security += "/" + sec.Mechanism
		}
	}
	return c
}

// Describe is the configuration as a series is headed: the system and
// version, the durability level, the topology, the load and the testbed.
func (c Config) Describe() string {
	head := []string{strings.TrimSpace(string(c.System) + " " + c.BrokerVersion), fmt.Sprintf("level %d", c.Level)}
	if c.Brokers > 0 {
		head = append(head, fmt.Sprintf("%d brokers", c.Brokers))
	}
	if c.Bookies > 0 {
		head = append(head, fmt.Sprintf("%d bookies", c.Bookies))
	}
	head = append(head, fmt.Sprintf("%d B messages at %d msg/s", c.Workload.MessageSize, c.Workload.ProducerRate))
	if c.Testbed != "" {
		head = append(head, c.Testbed)
	}
	return strings.Join(head, ", ")
}

// Key names a configuration: the first 12 hex digits of the SHA-256 of
// its JSON. encoding/json writes struct fields in their order and map keys
// (the durability's settings) sorted, so equal configurations have equal
// keys.
func (c Config) Key() string {
	b, _ := json.Marshal(c)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])[:12]
}

// Run is one finished run of a series.
type Run struct {
	// Name is the run's, Dir where its results are (relative to the
	// archive), Start when it ran.
	Name, Dir string
	Start     time.Time
	Summary   *results.Summary
	// Report: Dir holds the run's HTML report (report.html), which the
	// history page links each run to; else it links its summary.json.
	Report bool
}

// Figure is one figure a series is tracked by: its name, unit, whether
// higher is better, and how to read it (false when the run lacks it).
type Figure struct {
	Name         string
	Unit         string
	HigherBetter bool
	Get          func(*results.Summary) (float64, bool)
}

// Figures are the figures of issue 61: throughput, publish and end-to-end
// latency p50/p99/p99.9, the corrected p99 and the brokers' CPU per
// message. A repeated run counts as its median (its summary's headline).
var Figures = []Figure{
	{"publish MB/s", "MB/s", true, func(s *results.Summary) (float64, bool) {
		return s.Results.PublishMBPerSec, s.Results.PublishMBPerSec > 0
	}},
	{"publish p50", "ms", false, func(s *results.Summary) (float64, bool) { return s.Results.PublishLatencyMs.P50, true }},
	{"publish p99", "ms", false, func(s *results.Summary) (float64, bool) { return s.Results.PublishLatencyMs.P99, true }},
	{"publish p99.9", "ms", false, func(s *results.Summary) (float64, bool) { return s.Results.PublishLatencyMs.P999, true }},
	{"corrected p99", "ms", false, func(s *results.Summary) (float64, bool) {
		if l := s.Results.CorrectedLatencyMs; l != nil {
			return l.P99, true
		}
		return 0, false
	}},
	{"end-to-end p50", "ms", false, latency(func(l v1alpha1.LatencySummary) float64 { return l.P50 })},
	{"end-to-end p99", "ms", false, latency(func(l v1alpha1.LatencySummary) float64 { return l.P99 })},
	{"end-to-end p99.9", "ms", false, latency(func(l v1alpha1.LatencySummary) float64 { return l.P999 })},
	{"broker CPU per 1000 msg/s", "cores", false, func(s *results.Summary) (float64, bool) {
		b := s.Results.BrokerResources
		if b == nil || b.CPUCores == nil || s.Results.PublishRateMsgPerSec <= 0 {
			return 0, false
		}
		return *b.CPUCores / s.Results.PublishRateMsgPerSec * 1000, true
	}},
}

func latency(get func(v1alpha1.LatencySummary) float64) func(*results.Summary) (float64, bool) {
	return func(s *results.Summary) (float64, bool) {
		if l := s.Results.EndToEndLatencyMs; l != nil {
			return get(*l), true
		}
		return 0, false
	}
}

// Series is the runs of one configuration in the order they ran, with
// each figure's change points.
type Series struct {
	Key    string
	Config Config
	Runs   []Run
	Tracks []Track
}

// Track is one figure over a series: its values (the runs that have it,
// in order: Runs[i] is the index in the series' Runs of Values[i]) and
// where it changed.
type Track struct {
	Figure  Figure
	Values  []float64
	Runs    []int
	Changes []Change
}

// Change is a change point of a track, at the run Run (an index in the
// series' Runs), with whether it made the figure worse.
type Change struct {
	changepoint.ChangePoint
	Run   int
	Worse bool
}

// Group sorts runs into series, each in the order it ran (ties by name),
// series by their first run.
func Group(runs []Run) []Series {
	byKey := map[string]*Series{}
	var keys []string
	for _, r := range runs {
		c := ConfigOf(r.Summary)
		k := c.Key()
		s, ok := byKey[k]
		if !ok {
			s = &Series{Key: k, Config: c}
			byKey[k] = s
			keys = append(keys, k)
		}
		s.Runs = append(s.Runs, r)
	}
	out := make([]Series, 0, len(keys))
	for _, k := range keys {
		s := *byKey[k]
		sort.SliceStable(s.Runs, func(i, j int) bool {
			if !s.Runs[i].Start.Equal(s.Runs[j].Start) {
				return s.Runs[i].Start.Before(s.Runs[j].Start)
			}
			return s.Runs[i].Name < s.Runs[j].Name
		})
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Runs[0].Start.Before(out[j].Runs[0].Start) })
	return out
}

// Analyze finds each figure's change points in every series.
func Analyze(series []Series, o changepoint.Options) []Series {
	for i := range series {
		s := &series[i]
		s.Tracks = nil
		for _, f := range Figures {
			t := Track{Figure: f}
			for j, r := range s.Runs {
				if v, ok := f.Get(r.Summary); ok {
					t.Values, t.Runs = append(t.Values, v), append(t.Runs, j)
				}
			}
			for _, cp := range changepoint.Detect(t.Values, o) {
				worse := cp.Change < 0
				if !f.HigherBetter {
					worse = cp.Change > 0
				}
				t.Changes = append(t.Changes, Change{ChangePoint: cp, Run: t.Runs[cp.Index], Worse: worse})
			}
			s.Tracks = append(s.Tracks, t)
		}
	}
	return series
}

// Regression is a series whose newest runs started a worse segment: the
// last change point of a figure made it worse by at least the threshold.
type Regression struct {
	Series string
	Figure string
	Change Change
}

func (r Regression) String() string {
	return fmt.Sprintf("series %s: %s %+.1f %% (%.4g → %.4g, 95 %% interval of the change %.4g..%.4g, p %.2g) from run %d on",
		r.Series, r.Figure, r.Change.Relative*100, r.Change.Before, r.Change.After, r.Change.Low, r.Change.High, r.Change.PValue, r.Change.Run+1)
}

// Regressions are, for every series, the figures whose last change point
// made them worse by at least minRelative (0.05 = 5 %) of the segment
// before: the newest runs are in the worse segment.
func Regressions(series []Series, minRelative float64) []Regression {
	var out []Regression
	for _, s := range series {
		for _, t := range s.Tracks {
			if len(t.Changes) == 0 {
				continue
			}
			last := t.Changes[len(t.Changes)-1]
			rel := last.Relative
			if rel < 0 {
				rel = -rel
			}
			if last.Worse && rel >= minRelative {
				out = append(out, Regression{Series: s.Key, Figure: t.Figure.Name, Change: last})
			}
		}
	}
	return out
}
