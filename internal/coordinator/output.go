package coordinator

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/results"
)

// ResultsInput is the results package's input for this run: the
// snapshots, the clock offsets, the rate search and notes with the exact
// delivery accounting and the backlog drain. The durability is what the
// run read from an existing cluster when it did, else the one given.
func (r *Result) ResultsInput(run, namespace string, durability *v1alpha1.EffectiveDurability) results.Input {
	if r.Durability != nil {
		durability = r.Durability
	}
	in := results.Input{
		Run: run, Namespace: namespace, System: r.System, Workload: r.Workload,
		Durability: durability, Snapshots: r.Snapshots, RateSearch: r.RateSearch,
		Security: r.Security, Collection: r.Collection, FailureSettings: r.FailureSettings,
	}
	for i, off := range r.ClockOffsets {
		name := fmt.Sprintf("worker-%d", i)
		if i < len(r.Workers) {
			name = r.Workers[i]
		}
		in.ClockOffsets = append(in.ClockOffsets, results.ClockOffset{
			Worker: name, OffsetMs: float64(off.OffsetMicros) / 1000, UncertaintyMs: float64(off.UncertaintyMicros) / 1000,
		})
	}
	a := r.Accounting
	if r.Accounted {
		in.Delivery = &results.Delivery{Lost: a.Lost, NotConsumed: a.NotConsumed, Duplicates: a.Duplicates, LostRuns: a.LostRuns}
		in.Notes = append(in.Notes, fmt.Sprintf("delivery accounting (per producer sequence numbers, every subscription): sent %d, acknowledged %d, failed %d, received %d distinct, lost %d, not consumed %d, duplicates %d",
			a.Sent, a.Acked, a.Failed, a.Received, a.Lost, a.NotConsumed, a.Duplicates))
		if a.Unanswered > 0 {
			in.Notes = append(in.Notes, fmt.Sprintf("%d sends had no answer, neither an acknowledgement nor a failure, when the load stopped and the producers were flushed and closed: the brokers could not write them (a client with no send timeout, as OMB's, holds them). They count neither as acknowledged nor as lost", a.Unanswered))
		}
	}
	if b := r.Backlog; b != nil && b.BuiltBytes > 0 {
		in.Notes = append(in.Notes, fmt.Sprintf("backlog: %.1f MB built in %.1f s, drained to %.1f MB in %.1f s at %.1f MB/s",
			float64(b.BuiltBytes)/1e6, b.BuildSeconds, float64(b.RemainingBytes)/1e6, b.DrainSeconds, b.DrainMBPerSec))
	}
	for _, d := range r.PageCacheDrops {
		if d.Dropped {
			in.Notes = append(in.Notes, fmt.Sprintf("page cache dropped on the broker nodes %s (request %d, %s)", d.Reason, d.Seq, d.At.UTC().Format(time.RFC3339)))
		} else {
			in.Notes = append(in.Notes, fmt.Sprintf("page cache NOT dropped %s (request %d): %s", d.Reason, d.Seq, d.Message))
		}
	}
	in.Notes = append(in.Notes, r.Notes...)
	return in
}

// DescribeConfigMap says how large the results ConfigMap of in is (a
// cluster run writes it, and Kubernetes holds at most 1 MiB in one), what
// was thinned to fit, and how long it took to build: a cluster run's
// coordinator builds it again at every interval (Options.Checkpoint), from
// every snapshot so far.
func DescribeConfigMap(in results.Input) string {
	start := time.Now()
	cm, sum, err := results.BuildConfigMap(in)
	took := time.Since(start)
	if err != nil {
		return fmt.Sprintf("results ConfigMap: %v", err)
	}
	size, err := results.EncodedSize(cm)
	if err != nil {
		return fmt.Sprintf("results ConfigMap: %v", err)
	}
	thinned := "nothing thinned"
	if t := sum.Truncation; t != nil {
		thinned = fmt.Sprintf("thinned: series stride %d, interval histogram stride %d, %d subscriptions listed", t.SeriesStride, t.IntervalHistogramStride, t.SubscriptionsListed)
	}
	return fmt.Sprintf("results ConfigMap: %d B of its %d B budget, built in %.1f ms (%d snapshots; %s)",
		size, results.MaxConfigMapBytes, float64(took.Microseconds())/1000, len(in.Snapshots), thinned)
}

// WriteFiles writes summary.json and omb-result.json into dir and returns
// the summary.
func WriteFiles(dir string, in results.Input) (*results.Summary, error) {
	sum, err := results.Summarize(in)
	if err != nil {
		return nil, err
	}
	return sum, WriteSummaryFiles(dir, sum, in)
}

// WriteSummaryFiles writes sum, a summary of in (finished: with its
// faults, internal/outcome), as summary.json and in's OMB result as
// omb-result.json into dir.
func WriteSummaryFiles(dir string, sum *results.Summary, in results.Input) error {
	omb, err := results.BuildOMB(in)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(dir, results.KeyOMB), omb); err != nil {
		return err
	}
	return WriteSummary(dir, sum)
}

// WriteAggregate writes a repeated run's summary.json into dir: the
// Aggregate of its repeats' summaries (dirs[i] the directory of sums[i],
// relative to dir), and returns it.
func WriteAggregate(dir string, sums []*results.Summary, dirs []string) (*results.Summary, error) {
	agg, err := results.Aggregate(sums, dirs)
	if err != nil {
		return nil, err
	}
	if err := WriteSummary(dir, agg); err != nil {
		return nil, fmt.Errorf("writing the repeated run's summary: %w", err)
	}
	return agg, nil
}

// WriteSummary writes sum as dir's summary.json, indented: the bytes are
// those of a results ConfigMap's summary.json (compact) indented, so
// the two modes' files compare byte for byte.
func WriteSummary(dir string, sum *results.Summary) error {
	return writeJSON(filepath.Join(dir, results.KeySummary), sum)
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
