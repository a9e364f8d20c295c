package localrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/javaruntime"
	"github.com/streambench/streambench-operator/internal/localbrokers"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/stats"
)

// lockedBuffer is written by the progress callback and the run's own
// lines from different goroutines.
type lockedBuffer struct {
	mu    sync.Mutex
	b     bytes.Buffer
	watch map[string]chan struct{}
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.b.Write(p)
	for s, ch := range l.watch {
		if strings.Contains(l.b.String(), s) {
			close(ch)
			delete(l.watch, s)
		}
	}
	return n, err
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// when returns a channel closed once s has been written.
func (l *lockedBuffer) when(s string) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	ch := make(chan struct{})
	if strings.Contains(l.b.String(), s) {
		close(ch)
		return ch
	}
	if l.watch == nil {
		l.watch = map[string]chan struct{}{}
	}
	l.watch[s] = ch
	return ch
}

type localRun struct {
	out            *Outcome
	err            error
	stdout, stderr *lockedBuffer
}

// running is a local run in progress.
type running struct {
	t      *testing.T
	stderr *lockedBuffer
	done   chan localRun
}

// asTheCommand as Options.SnapshotInterval makes startRun ask for no
// interval, as `streambench run` does, instead of its 5 s.
const asTheCommand = -1

func startRun(t *testing.T, o Options) *running {
	t.Helper()
	lr := localRun{stdout: &lockedBuffer{}, stderr: &lockedBuffer{}}
	o.Stdout, o.Stderr = lr.stdout, lr.stderr
	if o.ResultsDir == "" {
		o.ResultsDir = t.TempDir()
	}
	switch o.SnapshotInterval {
	case 0:
		o.SnapshotInterval = 5 * time.Second
	case asTheCommand:
		o.SnapshotInterval = 0
	}
	if o.Signals == nil {
		// Never the test binary's own signals.
		o.Signals = make(chan os.Signal)
	}
	r := &running{t: t, stderr: lr.stderr, done: make(chan localRun, 1)}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
		defer cancel()
		lr.out, lr.err = Run(ctx, o)
		r.done <- lr
	}()
	return r
}

// wait waits for the run to return.
func (r *running) wait() localRun {
	lr := <-r.done
	r.t.Logf("stderr:\n%s\nstdout:\n%s", lr.stderr.String(), lr.stdout.String())
	return lr
}

// waitFor waits until the run writes s to stderr, then calls act and waits
// for the run to return. A run that ends before is a failure.
func (r *running) waitFor(s string, act func()) localRun {
	select {
	case <-r.stderr.when(s):
		act()
		return r.wait()
	case lr := <-r.done:
		r.done <- lr
		lr = r.wait()
		r.t.Fatalf("the run ended (%v) before it wrote %q", lr.err, s)
		return lr
	}
}

// checkStopped fails unless every broker JVM the run started is gone.
func checkStopped(t *testing.T, out *Outcome, want int) {
	t.Helper()
	if out == nil {
		t.Fatal("no outcome")
	}
	if len(out.BrokerPids) != want {
		t.Errorf("run started %d broker JVMs (%v), want %d", len(out.BrokerPids), out.BrokerPids, want)
	}
	for _, pid := range out.BrokerPids {
		if localbrokers.PidAlive(pid) {
			t.Errorf("broker pid %d still runs after the run returned", pid)
			_ = localbrokers.StopPid(pid, 0)
		}
	}
}

// checkResults reads back what the run wrote and checks the delivery and
// the rates.
func checkResults(t *testing.T, lr localRun, system v1alpha1.System) *results.Summary {
	t.Helper()
	out := lr.out
	if out.Summary == nil {
		t.Fatal("no summary")
	}
	raw, err := os.ReadFile(filepath.Join(out.Dir, results.KeySummary))
	if err != nil {
		t.Fatal(err)
	}
	var sum results.Summary
	if err := json.Unmarshal(raw, &sum); err != nil {
		t.Fatalf("summary.json does not parse: %v", err)
	}
	raw, err = os.ReadFile(filepath.Join(out.Dir, results.KeyOMB))
	if err != nil {
		t.Fatal(err)
	}
	var omb results.OMBResult
	if err := json.Unmarshal(raw, &omb); err != nil {
		t.Fatalf("omb-result.json does not parse: %v", err)
	}
	if len(omb.PublishRate) == 0 || omb.AggregatedPublishLatency99pct <= 0 || omb.MessageSize != int64(sum.Workload.MessageSize) {
		t.Errorf("omb-result.json: publishRate %v, p99 %v, messageSize %d", omb.PublishRate, omb.AggregatedPublishLatency99pct, omb.MessageSize)
	}
	html, err := os.ReadFile(filepath.Join(out.Dir, "report.html"))
	if err != nil {
		t.Fatalf("report.html: %v", err)
	}
	if out.Report != filepath.Join(out.Dir, "report.html") || !bytes.Contains(html, []byte("<html")) || !bytes.Contains(html, []byte(sum.Run)) {
		t.Errorf("report %q is not the run's HTML report (%d bytes)", out.Report, len(html))
	}
	r := sum.Results
	if sum.System != system || r.Sent == 0 || r.Acked != r.Sent || r.Received != r.Acked || r.Lost != 0 || r.NotConsumed != 0 || sum.Duplicates != 0 {
		t.Errorf("system %s, sent %d, acked %d, received %d, lost %d, not consumed %d, duplicates %d: want every sent message acked and received once",
			sum.System, r.Sent, r.Acked, r.Received, r.Lost, r.NotConsumed, sum.Duplicates)
	}
	if r.PublishRateMsgPerSec <= 0 || r.PublishMBPerSec <= 0 || r.ConsumeMBPerSec <= 0 || r.PublishLatencyMs.P99 <= 0 ||
		r.EndToEndLatencyMs == nil || r.EndToEndLatencyMs.P99 <= 0 {
		t.Errorf("headline %+v: want non-zero rates and latencies", r)
	}
	// How the brokers ran is stated, and printed.
	if b := sum.Brokers; b == nil || len(b.JVM) == 0 || len(b.Config) == 0 || !strings.Contains(lr.stdout.String(), strings.Join(b.JVM, " ")) {
		t.Errorf("broker setup %+v: want the JVM options and settings, printed", b)
	}
	// The Java the brokers ran on is the java on PATH, read from it, and
	// printed; the testbed's topology says the same.
	if want, err := localbrokers.BrokerJava(context.Background()); err != nil {
		t.Errorf("reading this machine's java: %v", err)
	} else if b := sum.Brokers; b == nil || b.Java == nil || *b.Java != *want || b.Java.Major < 17 ||
		!strings.Contains(lr.stdout.String(), javaruntime.String(want)) {
		t.Errorf("broker setup %+v: want Java %+v, printed", b, want)
	} else if tb := sum.Testbed; tb == nil || tb.Topology == nil || tb.Topology.Java == nil || *tb.Topology.Java != *want {
		t.Errorf("testbed %+v: want the topology's Java %+v", tb, want)
	}
	// The host's CPU is judged, and the verdict printed.
	if b := sum.BrokerResources; b == nil || b.Host == nil || b.Host.CPUs == 0 || b.Host.CPUBusyCores == nil || b.Host.ToolCPUCores == nil ||
		!strings.Contains(b.Host.CPUVerdict, "busy over the measured phase") || !strings.Contains(lr.stdout.String(), b.Host.CPUVerdict) {
		t.Errorf("broker resources %+v: want the host's CPU figures and verdict, printed", b)
	}
	// Counted from the intended send time, the corrected latency is never
	// below the publish latency by more than the pacer's early send (50 µs).
	if c := r.CorrectedLatencyMs; c == nil || c.P50 < r.PublishLatencyMs.P50-0.05 || c.P99 < r.PublishLatencyMs.P99-0.05 {
		t.Errorf("corrected latency %+v beside publish latency %+v: want it in the headline, at or above", c, r.PublishLatencyMs)
	}
	if sum.Durability == nil || sum.Durability.AchievedLevel != v1alpha1.Level2 {
		t.Errorf("durability %+v, want level 2 achieved", sum.Durability)
	}
	// The disk under the brokers' data was probed before the load (with
	// TestMain's small bounds), and the result kept.
	if tb := sum.Testbed; tb == nil || len(tb.Nodes) != 1 || len(tb.Nodes[0].Volumes) != 1 ||
		tb.Nodes[0].Volumes[0].Name != "data" || tb.Nodes[0].Volumes[0].FsyncLatencyMs.Count != int64(smallProbe.Appends) {
		t.Errorf("testbed %+v: want the probe of the brokers' data directory", tb)
	}
	// The terminal: progress lines on stderr, the table on stdout.
	if e := lr.stderr.String(); !strings.Contains(e, "] measure") || !strings.Contains(e, "MB/s") || !strings.Contains(e, "e2e p99") {
		t.Errorf("no progress line of the measured phase on stderr")
	}
	so := lr.stdout.String()
	for _, w := range []string{"throughput", "p99.99", "  corrected", "end-to-end", fmt.Sprintf("lost %d", r.Lost), "durability  level 2", "report.html"} {
		if !strings.Contains(so, w) {
			t.Errorf("summary table lacks %q", w)
		}
	}
	return &sum
}

// TestRunKafka is the quickstart: the sample Kafka run at level 2, three
// brokers, with a short workload.
func TestRunKafka(t *testing.T) {
	lr := startRun(t, Options{RunFile: "../../config/samples/run-ack2-async.yaml", WorkloadFile: "testdata/short-latency.yaml"}).wait()
	if lr.err != nil {
		t.Fatalf("run: %v", lr.err)
	}
	checkStopped(t, lr.out, 3)
	sum := checkResults(t, lr, v1alpha1.SystemKafka)
	if len(sum.Workers) != 4 {
		t.Errorf("%d workers, want the sample's 4", len(sum.Workers))
	}
	// The floor is 0.8, not 1: bytes are counted when a broker writes
	// them and acks when they arrive, so on a busy machine up to a second
	// of a 15 s window's writes can fall on the other side of its edge.
	// It still fails a broker that does not write its replicas (1/3).
	checkBrokerResources(t, sum, 3, 0.8, 1.6)
}

// TestRunPulsar runs the Pulsar sample (level 2: ensemble 3, write 3, ack 2
// on three real bookies) with the same workload. The sample asks for three
// brokers; the standalone has one, and the run says so.
func TestRunPulsar(t *testing.T) {
	lr := startRun(t, Options{RunFile: "../../config/samples/run-ack2-async-pulsar.yaml", WorkloadFile: "testdata/short-latency.yaml"}).wait()
	if lr.err != nil {
		t.Fatalf("run: %v", lr.err)
	}
	checkStopped(t, lr.out, 1)
	sum := checkResults(t, lr, v1alpha1.SystemPulsar)
	if !strings.Contains(strings.Join(sum.Notes, "\n"), "asks for 3 Pulsar brokers") {
		t.Errorf("the summary notes do not say the standalone has one broker: %q", sum.Notes)
	}
	if !strings.Contains(lr.stderr.String(), "note: spec.cluster.managed.brokers asks for 3") {
		t.Errorf("the terminal does not say the standalone has one broker")
	}
	if p := sum.Durability.Pulsar; p == nil || p.EnsembleSize != 3 || p.AckQuorum != 2 {
		t.Errorf("pulsar durability %+v, want ensemble 3, ack quorum 2", p)
	}
	// Each bookie writes an entry to its journal at once, and again to its
	// entry log when DbLedgerStorage flushes its write cache (every 60 s or
	// when full), which a 15 s window may or may not hold: 1 to 2 times,
	// plus the journal's padding (measured: 1.14); the floor as for Kafka.
	checkBrokerResources(t, sum, 1, 0.8, 2.6)
}

// TestRunExisting uses brokers the run did not start (spec.cluster.existing):
// a full run, then a run stopped by one Ctrl-C. Neither may stop the brokers.
func TestRunExisting(t *testing.T) {
	ctx := context.Background()
	k, err := localbrokers.StartKafka(ctx, localbrokers.KafkaOptions{Brokers: 1, Log: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := k.Stop(); err != nil {
			t.Errorf("stopping Kafka: %v", err)
		}
	})
	dir := t.TempDir()
	runFile := filepath.Join(dir, "existing.yaml")
	if err := os.WriteFile(runFile, []byte(fmt.Sprintf(`apiVersion: streambench.io/v1alpha1
kind: BenchmarkRun
metadata: {name: existing-kafka}
spec:
  system: kafka
  durability:
    replication: {replicas: 1, ackReplicas: 1, mode: Sync}
    local: {mode: Async}
  cluster:
    existing: {bootstrapServers: %q}
  workers: {count: 2}
  thresholds:
  - {figure: lost, max: 0}
  - {figure: publishLatencyMs.p99, max: 60000}
  - {figure: publishRateMsgPerSec, min: 1000000000}
`, k.Bootstrap())), 0o644); err != nil {
		t.Fatal(err)
	}
	alive := func() {
		t.Helper()
		for _, pid := range k.Pids() {
			if !localbrokers.PidAlive(pid) {
				t.Fatalf("the run stopped broker pid %d, which it did not start", pid)
			}
		}
	}

	// Repeated twice on the brokers: each repeat's own results, and the
	// run's summary the medians with their intervals.
	t.Run("complete, repeated", func(t *testing.T) {
		lr := startRun(t, Options{RunFile: runFile, WorkloadFile: "testdata/short-latency.yaml", Repeats: 2}).wait()
		// The run file's thresholds: two held, the rate of a billion
		// messages a second did not; the results are written all the same.
		if !errors.Is(lr.err, ErrThresholds) || !strings.Contains(lr.err.Error(), "1 of 3 thresholds failed: publishRateMsgPerSec") ||
			!strings.Contains(lr.err.Error(), "< min 1e+09 (the median of 2 repeats)") {
			t.Fatalf("run: %v, want the failed rate threshold with its value", lr.err)
		}
		if so := lr.stdout.String(); !strings.Contains(so, "threshold   met    lost 0 <= max 0") || !strings.Contains(so, "threshold   FAILED publishRateMsgPerSec") {
			t.Errorf("the thresholds are not printed:\n%s", so)
		}
		checkStopped(t, lr.out, 0)
		alive()
		sum := lr.out.Summary
		if sum == nil || sum.Results.Lost != 0 || sum.Results.Received == 0 || sum.Results.Received != sum.Results.Acked {
			t.Fatalf("summary %+v", sum)
		}
		checkRepeats(t, lr, 2)
		// The brokers were read, not assumed: their values (Kafka's
		// default min.insync.replicas 1, no flush) are in the results,
		// and the level holds (1 of 1 replicas is a majority).
		d := sum.Durability
		if d == nil || !strings.Contains(d.Explanation, "Read from the existing cluster") {
			t.Fatalf("durability %+v was not read from the brokers", d)
		}
		if d.AchievedLevel != v1alpha1.Level2 || d.Verification != v1alpha1.NotVerified || d.Kafka.Broker["min.insync.replicas"] != "1" {
			t.Errorf("durability read: level %d, %s, broker %v; want level 2, not verified (Kafka does not tell its version), min.insync.replicas 1",
				d.AchievedLevel, d.Verification, d.Kafka.Broker)
		}
		if _, assumed := d.Kafka.Broker["default.replication.factor"]; !assumed {
			t.Errorf("broker default.replication.factor not read: %v", d.Kafka.Broker)
		}
	})

	t.Run("one Ctrl-C", func(t *testing.T) {
		sigs := make(chan os.Signal, 1)
		lr := startRun(t, Options{RunFile: runFile, WorkloadFile: "testdata/long-latency.yaml", Signals: sigs}).
			waitFor("] measure", func() { sigs <- syscall.SIGINT })
		if !errors.Is(lr.err, ErrInterrupted) {
			t.Fatalf("error %v, want ErrInterrupted", lr.err)
		}
		alive()
		// What was measured before the signal is kept, and says so.
		sum := lr.out.Summary
		if sum == nil {
			t.Fatal("no partial results written")
		}
		if !strings.Contains(strings.Join(sum.Notes, "\n"), "did not finish: interrupted") {
			t.Errorf("notes %q do not say the run was interrupted", sum.Notes)
		}
		if !strings.Contains(lr.stdout.String(), "lost: not counted, the run did not finish") {
			t.Errorf("the table of an interrupted run must not claim a loss count")
		}
		// The interval in progress at the signal is kept too.
		if sum.Results.Sent == 0 || sum.Results.PublishRateMsgPerSec <= 0 {
			t.Errorf("partial results hold no measurement: %+v", sum.Results)
		}
		// Without a warm-up, the measured phase starts with the load: its
		// first interval is not the idle second before the start.
		for _, p := range sum.Series.Points {
			if p.Phase == stats.PhaseMeasure && p.Index == 0 && p.PublishRateMsgPerSec <= 0 {
				t.Errorf("the measured phase starts with an idle interval: %+v", p)
			}
		}
	})
}

// checkRepeats checks what a repeated run left: each repeat's own results
// and report in repeat-<i>/, and the run's summary.json with every repeat's
// headline and each figure's median in its interval, printed.
func checkRepeats(t *testing.T, lr localRun, n int) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(lr.out.Dir, results.KeySummary))
	if err != nil {
		t.Fatal(err)
	}
	var agg results.Summary
	if err := json.Unmarshal(raw, &agg); err != nil {
		t.Fatal(err)
	}
	if len(agg.Repeats) != n {
		t.Fatalf("summary.json has %d repeats, want %d", len(agg.Repeats), n)
	}
	var sent int64
	for i, r := range agg.Repeats {
		dir := filepath.Join(lr.out.Dir, r.Dir)
		if r.Index != i+1 || r.Dir != fmt.Sprintf("repeat-%d", i+1) {
			t.Errorf("repeat %d: index %d, dir %q", i+1, r.Index, r.Dir)
		}
		var own results.Summary
		raw, err := os.ReadFile(filepath.Join(dir, results.KeySummary))
		if err == nil {
			err = json.Unmarshal(raw, &own)
		}
		if err != nil {
			t.Fatalf("repeat %d's own summary: %v", i+1, err)
		}
		// Its own headline, from its own topics.
		if own.Results.Sent == 0 || own.Results.Sent != r.Results.Sent || own.Results.PublishLatencyMs != r.Results.PublishLatencyMs {
			t.Errorf("repeat %d: summary.json says %+v, its own %+v", i+1, r.Results, own.Results)
		}
		if _, err := os.Stat(filepath.Join(dir, "report.html")); err != nil {
			t.Errorf("repeat %d: %v", i+1, err)
		}
		sent += own.Results.Sent
	}
	if agg.Results.Sent != sent {
		t.Errorf("sent %d over the repeats, the run says %d", sent, agg.Results.Sent)
	}
	p99 := []float64{agg.Repeats[0].Results.PublishLatencyMs.P99, agg.Repeats[1].Results.PublishLatencyMs.P99}
	if n == 2 && agg.Results.PublishLatencyMs.P99 != (p99[0]+p99[1])/2 {
		t.Errorf("publish p99 %v, want the median of the repeats' %v", agg.Results.PublishLatencyMs.P99, p99)
	}
	found := false
	for _, iv := range agg.Intervals {
		if iv.Figure == "publish p99 (ms)" {
			found = iv.N == n && iv.Low <= iv.Median && iv.Median <= iv.High
		}
	}
	if !found {
		t.Errorf("no interval of publish p99 over %d repeats: %+v", n, agg.Intervals)
	}
	if html, err := os.ReadFile(filepath.Join(lr.out.Dir, "report.html")); err != nil || !bytes.Contains(html, []byte(fmt.Sprintf("Over %d repeats", n))) {
		t.Errorf("the repeated run's report (%v) has no repeats' section", err)
	}
	if so := lr.stdout.String(); !strings.Contains(so, fmt.Sprintf("over %d repeats", n)) || !strings.Contains(so, "publish p99 (ms)") {
		t.Errorf("the repeats' table is not printed")
	}
}

// TestRunSecondInterrupt: Ctrl-C twice kills the broker JVMs at once; none
// is left behind.
func TestRunSecondInterrupt(t *testing.T) {
	sigs := make(chan os.Signal, 2)
	got := startRun(t, Options{RunFile: "testdata/kafka-1-broker.yaml", WorkloadFile: "testdata/long-latency.yaml", Signals: sigs}).
		waitFor("] measure", func() {
			sigs <- syscall.SIGINT
			sigs <- syscall.SIGINT
		})
	if !errors.Is(got.err, ErrInterrupted) {
		t.Fatalf("error %v, want ErrInterrupted", got.err)
	}
	if !strings.Contains(got.stderr.String(), "killing the broker JVMs") {
		t.Errorf("the second signal did not kill the brokers")
	}
	checkStopped(t, got.out, 1)
}

// TestRunWithoutJava: without java and mvn the run stops at once with what
// to install, before it writes anything.
func TestRunWithoutJava(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	results := t.TempDir()
	out, err := Run(context.Background(), Options{
		RunFile: "../../config/samples/run-ack2-async.yaml", WorkloadFile: "testdata/short-latency.yaml",
		ResultsDir: results, Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, Signals: make(chan os.Signal),
	})
	if err == nil || !strings.Contains(err.Error(), "install a JDK") || !strings.Contains(err.Error(), "Maven") {
		t.Fatalf("error %v, want localbrokers.CheckJava's", err)
	}
	if out != nil {
		t.Errorf("outcome %+v before anything ran", out)
	}
	if entries, _ := os.ReadDir(results); len(entries) != 0 {
		t.Errorf("results written without a run: %v", entries)
	}
}
