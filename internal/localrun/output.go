package localrun

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/coordinator"
	"github.com/streambench/streambench-operator/internal/cost"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/javaruntime"
	"github.com/streambench/streambench-operator/internal/report"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/stats"
	"github.com/streambench/streambench-operator/internal/workload"
)

// printHeader says what is about to run.
func printHeader(w io.Writer, run *v1alpha1.BenchmarkRun, eff v1alpha1.EffectiveDurability, workloadFile string) {
	wl := run.Spec.Workload
	fmt.Fprintf(w, "streambench run %s (local)\n", run.Name)
	where := "existing brokers"
	if e := run.Spec.Cluster.Existing; e != nil {
		where += " at " + strings.TrimSpace(e.BootstrapServers+" "+e.ServiceURL)
	} else {
		where = brokerWhat(run) + " on this machine"
	}
	fmt.Fprintf(w, "  system      %s: %s\n", run.Spec.System, where)
	fmt.Fprintf(w, "  durability  %s\n", DescribeDurability(eff))
	rate := fmt.Sprintf("%d msg/s", wl.ProducerRate)
	if workload.IsMaxRate(wl) {
		rate = "maximum rate (searched)"
	}
	from := ""
	if workloadFile != "" {
		from = " (from " + filepath.Base(workloadFile) + ")"
	}
	fmt.Fprintf(w, "  workload    %s%s: %d topic(s) x %d partitions, %d-byte messages, %s, %s warm-up + %s measured\n",
		wl.Name, from, wl.Topics, wl.PartitionsPerTopic, wl.MessageSize, rate,
		short(workload.WarmupDuration(wl)), short(workload.TestDuration(wl)))
	fmt.Fprintf(w, "  workers     %d (in this process)\n", run.Spec.Workers.Count)
}

// DescribeDurability is the level achieved in words, whether the sync-delay
// experiment verified it for the broker version, and the reason when it is
// weaker than the level asked for.
func DescribeDurability(eff v1alpha1.EffectiveDurability) string {
	s := fmt.Sprintf("level %d (%s replication, %s local", eff.AchievedLevel,
		strings.ToLower(string(eff.Replication)), strings.ToLower(string(eff.Local)))
	if eff.Journal != "" {
		s += ", journal " + strings.ToLower(string(eff.Journal))
	}
	s += "), " + durability.VerificationLabel(&eff)
	if eff.AchievedLevel != eff.RequestedLevel {
		s += fmt.Sprintf(" - DOWNGRADED from the requested level %d: %s", eff.RequestedLevel, eff.Explanation)
	}
	return s
}

// FormatProgress is one live progress line.
func FormatProgress(p coordinator.Progress) string {
	left := "?"
	if p.Remaining >= 0 {
		left = clock(p.Remaining)
	}
	phase := string(p.Phase)
	if p.Phase == coordinator.PhaseCooldown {
		phase = "catch-up"
	}
	return fmt.Sprintf("[%s] %-13s %s left | publish %8.0f msg/s %7.2f MB/s p99 %8.2f ms | consume %8.0f msg/s %7.2f MB/s e2e p99 %8.2f ms",
		clock(p.Elapsed), phase, left,
		p.PublishMsgPerSec, p.PublishMBPerSec, p.PublishP99Ms,
		p.ConsumeMsgPerSec, p.ConsumeMBPerSec, p.EndToEndP99Ms)
}

// clock is m:ss.
func clock(d time.Duration) string {
	d = d.Round(time.Second)
	return fmt.Sprintf("%d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}

func short(d time.Duration) string {
	if d == 0 {
		return "no"
	}
	s := d.Round(time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	return s
}

// PrintSummary writes the terminal summary of a run: throughput, latency,
// delivery accounting and the durability achieved.
// reportPath is empty when no report was written; finished is false for
// a run that was interrupted or failed, whose delivery was not accounted.
func PrintSummary(w io.Writer, s *results.Summary, dir, reportPath string, finished bool) {
	r := s.Results
	var measure *results.PhaseSummary
	for i := range s.Phases {
		if s.Phases[i].Phase == stats.PhaseMeasure {
			measure = &s.Phases[i]
		}
	}
	fmt.Fprintf(w, "\nResults of %s: %s, workload %s\n\n", s.Run, s.System, s.Workload.Name)
	consumeRate := 0.0
	if measure != nil {
		consumeRate = measure.ConsumeRateMsgPerSec
	}
	fmt.Fprintf(w, "%-18s%10s%10s\n", "throughput", "msg/s", "MB/s")
	fmt.Fprintf(w, "%-18s%10.1f%10.2f\n", "  publish", r.PublishRateMsgPerSec, r.PublishMBPerSec)
	fmt.Fprintf(w, "%-18s%10.1f%10.2f\n", "  consume", consumeRate, r.ConsumeMBPerSec)
	fmt.Fprintf(w, "\n%-18s%10s%10s%10s%10s%10s%10s\n", "latency (ms)", "avg", "p50", "p99", "p99.9", "p99.99", "max")
	row := func(name string, l v1alpha1.LatencySummary) {
		fmt.Fprintf(w, "%-18s%10.2f%10.2f%10.2f%10.2f%10.2f%10.2f\n", "  "+name, l.Avg, l.P50, l.P99, l.P999, l.P9999, l.Max)
	}
	row("publish", r.PublishLatencyMs)
	if r.CorrectedLatencyMs != nil {
		// ack - intended send: a slipped schedule shows here, not above.
		row("  corrected", *r.CorrectedLatencyMs)
	}
	if r.EndToEndLatencyMs != nil {
		row("end-to-end", *r.EndToEndLatencyMs)
	}
	if c := r.CatchUp; c != nil {
		fmt.Fprintf(w, "\nbacklog drain     %.2f MB/s in %.1f s\n", c.DrainMBPerSec, c.DrainSeconds)
		if c.PublishLatencyMs != nil {
			row("publish (drain)", *c.PublishLatencyMs)
		}
	}

	msgs := fmt.Sprintf("sent %d, acked %d, received %d", r.Sent, r.Acked, r.Received)
	switch {
	case !finished:
		msgs += "; lost: not counted, the run did not finish"
	default:
		msgs += fmt.Sprintf(", lost %d", r.Lost)
		if r.NotConsumed > 0 {
			msgs += fmt.Sprintf(", not consumed %d (still being read when the final drain ended: slow, not lost)", r.NotConsumed)
		}
		msgs += fmt.Sprintf(", duplicates %d", s.Duplicates)
	}
	fmt.Fprintf(w, "\nmessages    %s\n", msgs)
	// The faults with what each did, as the report's table has them; the
	// messages line above is the whole run's.
	for i, l := range report.FaultLines(s) {
		label := ""
		if i == 0 {
			label = "faults"
		}
		fmt.Fprintf(w, "%-12s%s\n", label, l)
	}
	if d := s.Durability; d != nil {
		fmt.Fprintf(w, "durability  %s\n", DescribeDurability(*d))
	}
	if b := s.Brokers; b != nil {
		fmt.Fprintf(w, "%-12s%s; %s; JVM %s\n", "brokers", b.Where, javaruntime.String(b.Java), strings.Join(b.JVM, " "))
	}
	if rs := s.RateSearch; rs != nil {
		fmt.Fprintf(w, "%-12s%s\n", "max rate", describeRateSearch(*rs))
	}
	printTestbed(w, s.Testbed)
	if b := s.BrokerResources; b != nil && b.Host != nil && b.Host.CPUVerdict != "" {
		verdict := b.Host.CPUVerdict
		if b.Host.CPUBound {
			verdict = "CPU-BOUND: " + verdict
		}
		fmt.Fprintf(w, "%-12s%s\n", "host cpu", verdict)
	}
	if c := s.Cost; c != nil {
		fmt.Fprintf(w, "%-12s%s\n", "cost", DescribeCost(c))
	}
	for _, n := range s.Notes {
		if strings.HasPrefix(n, "delivery accounting") {
			continue // the messages line says it
		}
		fmt.Fprintf(w, "note        %s\n", n)
	}
	fmt.Fprintf(w, "results     %s, %s\n", filepath.Join(dir, results.KeySummary), filepath.Join(dir, results.KeyOMB))
	if reportPath != "" {
		fmt.Fprintf(w, "report      %s\n", reportPath)
	}
}

// describeRateSearch is the max-rate search's outcome in one line: the rate,
// what it had to hold to count, and whether the measured phase kept it.
func describeRateSearch(rs results.RateSearch) string {
	out := fmt.Sprintf("%.0f msg/s", rs.RateMsgPerSec)
	if !rs.Converged {
		out += " (the search did not converge)"
	}
	if rs.HoldSeconds > 0 {
		out += fmt.Sprintf(", held %.0f s", rs.HoldSeconds)
		if rs.MaxP99LatencyMs > 0 {
			out += fmt.Sprintf(" with corrected p99 within %.0f ms", rs.MaxP99LatencyMs)
		}
	}
	switch m := rs.Measured; {
	case m == nil:
	case m.Held:
		out += "; the measured phase kept it"
	default:
		out += "; NOT KEPT in the measured phase: " + m.Reason
	}
	return out
}

// PrintRepeats prints a repeated run's aggregate: each figure's median over
// the repeats in its interval, and each repeat's value beside it.
func PrintRepeats(w io.Writer, s *results.Summary, dir, reportPath string) {
	fmt.Fprintf(w, "\nResults of %s over %d repeats (the same brokers, fresh topics each): %s, workload %s\n\n", s.Run, len(s.Repeats), s.System, s.Workload.Name)
	fmt.Fprintf(w, "%-30s%10s  %-28s%s\n", "figure", "median", "interval", "repeats")
	for _, f := range results.Figures {
		iv, ok := s.Interval(f)
		if !f.Tested || !ok {
			continue
		}
		var each []string
		for _, v := range s.RepeatValues(f) {
			each = append(each, strconv.FormatFloat(v, 'g', 4, 64))
		}
		interval := fmt.Sprintf("%.4g – %.4g (%.1f %%)", iv.Low, iv.High, 100*iv.Confidence)
		fmt.Fprintf(w, "%-30s%10.4g  %-28s%s\n", f.Name, iv.Median, interval, strings.Join(each, " "))
	}
	r := s.Results
	fmt.Fprintf(w, "\nmessages    sent %d, acked %d, received %d, lost %d, duplicates %d (all repeats)\n", r.Sent, r.Acked, r.Received, r.Lost, s.Duplicates)
	if iv := s.Intervals; len(iv) > 0 && iv[0].Confidence < 0.95 {
		fmt.Fprintf(w, "intervals   %d repeats bound a median at %.1f %% at best; 6 or more reach 95 %%\n", len(s.Repeats), 100*iv[0].Confidence)
	}
	fmt.Fprintf(w, "results     %s (each repeat's own: %s)\n", filepath.Join(dir, results.KeySummary), filepath.Join(dir, "repeat-<i>"))
	if reportPath != "" {
		fmt.Fprintf(w, "report      %s\n", reportPath)
	}
}

// DescribeCost is a run's cost in one line: its efficiency per core, its
// cost per hour and per TB, and whose prices (docs/cost.md); "–" where an
// input was not measured (summary.json's cost says which).
func DescribeCost(c *cost.Report) string {
	val := func(f cost.Figure, format string) string {
		if f.Value == nil {
			return "–"
		}
		return fmt.Sprintf(format, *f.Value)
	}
	prices := c.Model.Name
	if c.Model.Default {
		prices += ", the default list prices"
	}
	out := fmt.Sprintf("%s MB/s per broker core used; %s %s per hour, %s per TB produced (prices %s; docs/cost.md)",
		val(c.Efficiency.MBPerSecPerCoreUsed, "%.3g"), val(c.Costs.TotalPerHour, "%.4g"), c.Model.Currency, val(c.Costs.PerTBIngested, "%.4g"), prices)
	if p := c.Projection; p != nil && p.Refused != "" {
		out += fmt.Sprintf("; no projection to %g MB/s: %s", p.TargetMBPerSec, p.Refused)
	}
	return out
}
