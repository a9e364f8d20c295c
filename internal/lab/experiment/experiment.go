// Package experiment measures whether a durability level's local sync
// happens before the acknowledgement, on real brokers, instead of taking a
// document's word for it.
//
// The brokers (internal/localbrokers: Kafka KRaft x3, Pulsar standalone with
// 3 bookies) run with the syncdelay shim, which adds a known delay to every
// fsync, fdatasync, msync(MS_SYNC) and sync_file_range(WAIT_AFTER) and
// traces each with its start, end and file. A small fixed-rate workload then
// goes through streambench's own coordinator and an in-process worker, once
// per level, one level at a time (the next waits until the last one's syncs
// are over). If a level syncs before it acks, every ack comes after a sync
// of the files that hold the message, started after the message was sent
// (acks.go), and the publish p50 is at least the delay; if it does not, no
// ack waits for such a sync. The verdict rests on that count, which a busy
// machine does not move: load stretches latencies, it does not add syncs of
// a file a broker does not sync. The latency is reported beside it.
//
// hack/durability-experiment runs it and prints the table of
// docs/methodology.md; the package's test runs it in make test.
package experiment

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/coordinator"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/localbrokers"
	"github.com/streambench/streambench-operator/internal/stats"
	"github.com/streambench/streambench-operator/internal/syncdelay"
	"github.com/streambench/streambench-operator/internal/worker"
)

// Cell is one system at one durability setting.
type Cell struct {
	System v1alpha1.System
	Level  v1alpha1.Level
	// Bypass runs Pulsar with the bookie journal bypassed
	// (journalWriteData=false), the study's match for Kafka's default.
	Bypass bool
	// Version of the broker ("": the local default,
	// localbrokers.DefaultKafkaVersion or DefaultPulsarVersion).
	Version string
}

// Name is a short label, e.g. "kafka-L1", "pulsar-L4-bypass" or
// "kafka-4.1.1-L2".
func (c Cell) Name() string {
	n := string(c.System)
	if c.Version != "" {
		n += "-" + c.Version
	}
	n += fmt.Sprintf("-L%d", c.Level)
	if c.Bypass {
		n += "-bypass"
	}
	return n
}

// StrimziKafkaVersion is the Kafka that the local cluster's Strimzi (1.2.0,
// built by hack/images/strimzi.sh, whose KAFKA_VERSION it must equal)
// deploys for managed runs: the experiment covers it too, so a managed run
// on it reports its level as verified, as a local run on
// localbrokers.DefaultKafkaVersion does. While the two are the same
// version (Strimzi 1.2.0 and local mode both run 4.3.1) the matrix runs it
// once.
const StrimziKafkaVersion = "4.3.1"

// Spec is the durability spec the cell runs with: the level, or for the
// journal bypass the level's explicit modes with journal Bypass.
func (c Cell) Spec() v1alpha1.DurabilitySpec {
	l := c.Level
	if !c.Bypass {
		return v1alpha1.DurabilitySpec{Level: &l}
	}
	r, loc, _ := durability.ModesOf(l)
	return v1alpha1.DurabilitySpec{
		Replication: &v1alpha1.ReplicationDurability{Mode: r},
		Local:       &v1alpha1.LocalDurability{Mode: loc, Journal: v1alpha1.JournalBypass},
	}
}

// PromisesSync is whether the level promises a local sync before the ack
// (levels 1 and 3 of Table 1-6 of the durability study).
func (c Cell) PromisesSync() bool {
	return c.Level == v1alpha1.Level1 || c.Level == v1alpha1.Level3
}

// Cells is the experiment's matrix: Kafka and Pulsar at every level, Pulsar
// with the journal bypassed at the two async-local levels, and Kafka at
// every level again on StrimziKafkaVersion when that is another version
// than local mode's.
func Cells() []Cell {
	var cs []Cell
	for _, sys := range []v1alpha1.System{v1alpha1.SystemKafka, v1alpha1.SystemPulsar} {
		for l := v1alpha1.Level1; l <= v1alpha1.Level4; l++ {
			cs = append(cs, Cell{System: sys, Level: l})
		}
	}
	cs = append(cs,
		Cell{System: v1alpha1.SystemPulsar, Level: v1alpha1.Level2, Bypass: true},
		Cell{System: v1alpha1.SystemPulsar, Level: v1alpha1.Level4, Bypass: true})
	if StrimziKafkaVersion != localbrokers.DefaultKafkaVersion {
		for l := v1alpha1.Level1; l <= v1alpha1.Level4; l++ {
			cs = append(cs, Cell{System: v1alpha1.SystemKafka, Level: l, Version: StrimziKafkaVersion})
		}
	}
	return cs
}

// Result is what one cell measured.
type Result struct {
	Cell    Cell
	Version string
	// Settings names what carries the cell's durability (acks, flush,
	// journal, quorums).
	Settings string
	// P50 and P99 are the measured phase's publish latency (ack - send).
	P50, P99 time.Duration
	Acked    int64
	// Syncs counts the delayed calls the brokers made while the cell ran
	// and until its syncs were over (all of them, including background
	// ones), by call name.
	Syncs map[string]int
	// Coverage is which acks of the measured phase came after a sync of
	// the cell's data files (acks.go): the verdict.
	Coverage coverage
}

// SyncsPerMessage is the delayed syncs per acknowledged message.
func (r Result) SyncsPerMessage() float64 {
	if r.Acked == 0 {
		return 0
	}
	return float64(syncdelay.Total(r.Syncs)) / float64(r.Acked)
}

// Shares of the acks after a data sync that decide a verdict: a level that
// syncs before its ack has every ack after one (a little is left for the
// clocks of the shim and the worker, read a few µs apart); a level that does
// not has none, except when a background flush of the same files happens to
// fit inside a slow message's send and ack: up to asyncShare, or up to
// chanceFactor times what the same windows moved in time hold
// (coverage.Chance), when a busy machine has made the windows long. Where
// coincidence alone would cover tooSlowToTell of them, the cell cannot
// tell a level that waits from one that does not, and says so.
const (
	syncedShare   = 0.95
	asyncShare    = 0.05
	chanceFactor  = 2
	tooSlowToTell = 0.45
)

// Check says whether the result agrees with the level's promise. A level
// that promises a sync before the ack needs a data sync between the send
// and the ack of (nearly) every message, and a p50 of at least delay; a
// level that does not needs (nearly) no ack after such a sync, whatever its
// latency (a slow machine slows every ack, it cannot make the brokers
// sync), or a p50 below the delay.
func (r Result) Check(delay time.Duration) error {
	c := r.Coverage
	if c.Acks == 0 {
		return fmt.Errorf("%s: no message of the measured phase was acknowledged", r.Cell.Name())
	}
	if r.Cell.PromisesSync() {
		if c.DataSyncs == 0 {
			return fmt.Errorf("%s (%s): the brokers made no delayed sync of the topic's data files in the measured phase; the shim is not loaded or the level does not sync at all (all syncs: %s)",
				r.Cell.Name(), r.Settings, orNone(SyncCalls(r.Syncs)))
		}
		if c.Share() < syncedShare {
			return fmt.Errorf("%s (%s): only %d of %d acks (%.0f %%) came after a sync of the data started after their send, so the ack did not wait for a local sync: level %d is not achieved on %s %s",
				r.Cell.Name(), r.Settings, c.AfterSync, c.Acks, 100*c.Share(), r.Cell.Level, r.Cell.System, r.Version)
		}
		// A busy machine only ever adds latency, so this cannot fail
		// because of load.
		if r.P50 < delay {
			return fmt.Errorf("%s (%s): publish p50 %s is below the injected sync delay %s, so the ack did not wait for a local sync: level %d is not achieved on %s %s",
				r.Cell.Name(), r.Settings, ms(r.P50), ms(delay), r.Cell.Level, r.Cell.System, r.Version)
		}
		return nil
	}
	limit := max(asyncShare, chanceFactor*c.Chance)
	if limit >= tooSlowToTell {
		return fmt.Errorf("%s (%s): the acks were so slow (publish p50 %s) that %.0f %% of their windows, moved in time, hold a sync of the data by chance: the cell cannot tell whether the ack waits for one; run it on a quieter machine",
			r.Cell.Name(), r.Settings, ms(r.P50), 100*c.Chance)
	}
	// More acks after a data sync than coincidence gives fail the level
	// only when its p50 is at the delay or above: with half of the acks or
	// more faster than one delayed sync, those cannot have waited for one,
	// and a level's settings make every ack wait or none. A busy machine
	// gets there through Pulsar's background journal flush
	// (journalSyncData=false: every second, the journal thread hands a
	// sync to its force-write thread right after it wrote a batch and
	// released that batch's acks): when the acks' way back to the client
	// takes longer than the sync, they come after the sync their own
	// write started, which windows moved in time cannot hold (CI at a load
	// of 11.85: 173 of 801 acks, 10 % by chance, p50 10.20 ms).
	if c.Share() > limit && r.P50 >= delay {
		return fmt.Errorf("%s (%s): %d of %d acks (%.0f %%) came after a sync of the data started after their send, against %.0f %% by chance; a level without a local sync before the ack should not wait for one (publish p50 %s, delay %s)",
			r.Cell.Name(), r.Settings, c.AfterSync, c.Acks, 100*c.Share(), 100*c.Chance, ms(r.P50), ms(delay))
	}
	return nil
}

// HostBound is whether a level without a sync on its ack path still had a
// p50 of half the delay or more: its acks did not wait for a sync (Check),
// so the machine, not the broker's durability, set that latency.
func (r Result) HostBound(delay time.Duration) bool {
	return !r.Cell.PromisesSync() && r.P50 >= delay/2
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// Options configure Run.
type Options struct {
	// Cells to run (default Cells()).
	Cells []Cell
	// Delay added to every sync (default 30 ms).
	Delay time.Duration
	// Rate in messages per second of the one producer (default 200),
	// MessageSize in bytes (default 1024), on one topic of one partition.
	Rate        int64
	MessageSize int32
	// Warmup and Measure are the phases of each cell (default 5 s and 4 s).
	// A new topic acknowledges nothing for its first second or two; the
	// warm-up must also hold the draining of what queued meanwhile, which
	// on a loaded machine took 4 s more (CI once measured level 2 on
	// Kafka at a p50 of 17.66 ms after a 2 s warm-up, 2.47 ms quiet).
	Warmup, Measure time.Duration
	// Dir holds the shim, the traces and the brokers' data (default: a
	// new temporary directory, removed at the end).
	Dir string
	// Log receives progress lines (default: none).
	Log func(format string, args ...any)
	// PulsarJVM are the standalones' heap, collector and compiler options
	// (nil: localbrokers.PulsarJVM). The verdicts read which sync an ack
	// came after, not how fast it came, so the test runs
	// localbrokers.PulsarTestJVM, C1 only, as its Kafka nodes do
	// (localbrokers.DefaultJVMArgs).
	PulsarJVM []string
}

func (o *Options) defaults() {
	if o.Cells == nil {
		o.Cells = Cells()
	}
	if o.Delay == 0 {
		o.Delay = 30 * time.Millisecond
	}
	if o.Rate == 0 {
		o.Rate = 200
	}
	if o.MessageSize == 0 {
		o.MessageSize = 1024
	}
	if o.Warmup == 0 {
		o.Warmup = 5 * time.Second
	}
	if o.Measure == 0 {
		o.Measure = 4 * time.Second
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
}

// group is the cells that share one broker start: every Kafka level is a
// topic and producer setting (acks, flush.messages, flush.ms), so one
// cluster serves all of them; Pulsar's local durability is a bookie setting
// (journalSyncData, journalWriteData), so each bookie configuration needs its
// own standalone, while the quorums are namespace policies of each run.
type group struct {
	system  v1alpha1.System
	version string
	bookie  map[string]string
	cells   []Cell
	effs    []v1alpha1.EffectiveDurability
}

func groups(cells []Cell) ([]*group, error) {
	var gs []*group
	for _, c := range cells {
		eff, err := durability.Translate(c.System, c.Spec())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name(), err)
		}
		var bookie map[string]string
		if eff.Pulsar != nil {
			bookie = eff.Pulsar.Bookie
		}
		var g *group
		for _, h := range gs {
			if h.system == c.System && h.version == c.Version && sameMap(h.bookie, bookie) {
				g = h
			}
		}
		if g == nil {
			g = &group{system: c.System, version: c.Version, bookie: bookie}
			gs = append(gs, g)
		}
		g.cells = append(g.cells, c)
		g.effs = append(g.effs, eff)
	}
	return gs, nil
}

// Run builds the shim, starts each broker configuration with it, runs
// every cell and stops the brokers again. It returns the results of the
// cells that ran, with an error for any that could not.
func Run(ctx context.Context, o Options) ([]Result, error) {
	o.defaults()
	dir := o.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "streambench-durability-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	lib, err := syncdelay.Build(ctx, filepath.Join(dir, "shim"))
	if err != nil {
		return nil, err
	}
	gs, err := groups(o.Cells)
	if err != nil {
		return nil, err
	}
	workerCtx, stopWorkers := context.WithCancel(context.Background())
	rec := &recorder{}
	url, workerDone, err := startWorker(workerCtx, rec.drivers())
	if err != nil {
		stopWorkers()
		return nil, err
	}
	defer func() { stopWorkers(); <-workerDone }()

	var out []Result
	for i, g := range gs {
		trace := filepath.Join(dir, fmt.Sprintf("trace-%d", i))
		env := syncdelay.Env(lib, o.Delay, trace)
		rs, err := runGroup(ctx, o, g, env, trace, url, rec, filepath.Join(dir, fmt.Sprintf("brokers-%d", i)))
		out = append(out, rs...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

func runGroup(ctx context.Context, o Options, g *group, env []string, trace, workerURL string, rec *recorder, dataDir string) (_ []Result, err error) {
	cfg := driver.Config{System: g.system}
	var version string
	var pids []int
	var stop func() error
	start := time.Now()
	switch g.system {
	case v1alpha1.SystemKafka:
		// The level-2 broker settings (replication factor 3,
		// min.insync.replicas 2, no flush defaults): the flush of levels
		// 1 and 3 comes from each run's topic configuration, as on an
		// existing cluster.
		base, err := durability.Translate(v1alpha1.SystemKafka, v1alpha1.DurabilitySpec{Level: ptr.To(v1alpha1.Level2)})
		if err != nil {
			return nil, err
		}
		k, err := localbrokers.StartKafka(ctx, localbrokers.KafkaOptions{BrokerConfig: base.Kafka.Broker, Version: g.version, Dir: dataDir, Env: env, Log: o.Log})
		if err != nil {
			return nil, err
		}
		stop, version, pids = k.Stop, k.Version, k.Pids()
		cfg.Brokers.BootstrapServers = k.Bootstrap()
	case v1alpha1.SystemPulsar:
		p, err := localbrokers.StartPulsar(ctx, localbrokers.PulsarOptions{
			BrokerConfig: g.effs[0].Pulsar.Broker, BookieConfig: g.bookie, Version: g.version, Dir: dataDir, Env: env, Log: o.Log,
			JVM: o.PulsarJVM,
		})
		if err != nil {
			return nil, err
		}
		stop, version, pids = p.Stop, p.Version, p.Pids()
		cfg.Brokers.ServiceURL, cfg.Brokers.AdminURL = p.ServiceURL(), p.AdminURL()
	default:
		return nil, fmt.Errorf("experiment: system %q is not kafka or pulsar", g.system)
	}
	defer func() {
		if serr := stop(); serr != nil {
			err = errors.Join(err, fmt.Errorf("stopping %s: %w", g.system, serr))
		}
	}()
	o.Log("%s %s ready in %s with every sync delayed by %s", g.system, version, time.Since(start).Round(time.Second), o.Delay)
	// A fast ack proves nothing if the shim is not in the broker: check
	// that every broker JVM has it mapped before measuring anything.
	if err := shimLoaded(pids, env); err != nil {
		return nil, err
	}

	var out []Result
	for i, c := range g.cells {
		before, err := syncdelay.ReadTrace(trace)
		if err != nil {
			return out, err
		}
		rec.reset()
		cfg.Durability = g.effs[i]
		cfg.RunID = fmt.Sprintf("dx%s%d", strings.NewReplacer("-", "", ".", "").Replace(c.Name()), time.Now().UnixNano()%1e6)
		res, err := coordinator.Run(ctx, coordinator.Options{
			Workers: []string{workerURL}, Driver: cfg, Workload: workload(c, o),
			SnapshotInterval: time.Second, Logf: o.Log,
		})
		if err != nil {
			return out, fmt.Errorf("%s: %w", c.Name(), err)
		}
		acks, topics := rec.take()
		data := dataFiles(g.system, topics)
		// The next cell waits until this one's syncs are over.
		after, quiet, err := quiesce(ctx, trace, data, max(time.Second, 10*o.Delay), time.Minute)
		if err != nil {
			return out, err
		}
		from, to, ok := measured(res.Snapshots)
		if !ok {
			return out, fmt.Errorf("%s: the run has no snapshot of its measured phase", c.Name())
		}
		m := stats.Aggregate(res.Snapshots, stats.PhaseMeasure)
		q := m.Producer.PublishLatency.Quantiles()
		r := Result{
			Cell: c, Version: version, Settings: Settings(g.effs[i]),
			P50: time.Duration(q.P50) * time.Microsecond, P99: time.Duration(q.P99) * time.Microsecond,
			Acked: m.Producer.Acked, Syncs: syncdelay.Count(after[len(before):]),
			Coverage: cover(acks, after[len(before):], data, from, to),
		}
		o.Log("%s: publish p50 %s p99 %s, %d acked; %d of %d acks after a data sync, %.1f %% by chance (%d data syncs in the phase); %.1f delayed syncs per message (%s)",
			c.Name(), ms(r.P50), ms(r.P99), r.Acked, r.Coverage.AfterSync, r.Coverage.Acks, 100*r.Coverage.Chance, r.Coverage.DataSyncs, r.SyncsPerMessage(), SyncCalls(r.Syncs))
		if !quiet {
			o.Log("%s: its data files were still being synced a minute after it ended; the next cell runs beside them", c.Name())
		}
		out = append(out, r)
	}
	return out, nil
}

// measured is the measured phase's start and end on the worker's wall
// clock, from its snapshots.
func measured(snaps []stats.Snapshot) (from, to time.Time, ok bool) {
	for _, s := range snaps {
		if s.Phase != stats.PhaseMeasure {
			continue
		}
		if !ok || s.Start.Before(from) {
			from = s.Start
		}
		if !ok || s.End.After(to) {
			to = s.End
		}
		ok = true
	}
	return from, to, ok
}

// workload is one producer on one partition at a fixed rate, without
// consumers: only the publish latency (ack - send) answers the question.
func workload(c Cell, o Options) v1alpha1.WorkloadSpec {
	return oneProducer("durability-"+c.Name(), o.Rate, o.MessageSize, o.Warmup, o.Measure)
}

// oneProducer is a workload of one producer on one partition at rate, with
// no subscription, warming up for warm and measuring for measure.
func oneProducer(name string, rate int64, size int32, warm, measure time.Duration) v1alpha1.WorkloadSpec {
	zero := int32(0)
	w, m := warm.Minutes(), measure.Minutes()
	return v1alpha1.WorkloadSpec{
		Name: name, Topics: 1, PartitionsPerTopic: 1, MessageSize: size,
		ProducersPerTopic: 1, SubscriptionsPerTopic: &zero, ConsumerPerSubscription: 1,
		ProducerRate: rate, WarmupDurationMinutes: &w, TestDurationMinutes: &m,
	}
}

// Settings names the keys that carry a cell's durability.
func Settings(eff v1alpha1.EffectiveDurability) string {
	switch {
	case eff.Kafka != nil:
		s := "acks=" + eff.Kafka.Producer[durability.KafkaProducerAcks]
		if f, ok := eff.Kafka.Topic[durability.KafkaTopicFlushMessages]; ok {
			s += ", flush.messages=" + f
		}
		return s
	case eff.Pulsar != nil:
		p := eff.Pulsar
		s := fmt.Sprintf("%d/%d/%d", p.EnsembleSize, p.WriteQuorum, p.AckQuorum)
		if p.Bookie[durability.PulsarBookieJournalWriteData] == "false" {
			return s + ", journal bypassed"
		}
		return s + ", journalSyncData=" + p.Bookie[durability.PulsarBookieJournalSyncData]
	}
	return ""
}

// Table is the results as the Markdown table of docs/methodology.md.
func Table(rs []Result, delay time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| system | level | settings | sync before ack promised | acks after a data sync | publish p50 / p99 (ms) | delayed syncs per message | agrees (delay %s ms) |\n", trimMs(delay))
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		verdict := "yes"
		if err := r.Check(delay); err != nil {
			verdict = "**no**"
		}
		latency := trimMs(r.P50) + " / " + trimMs(r.P99)
		if r.HostBound(delay) {
			latency += " (the host's: no ack waited for a sync)"
		}
		level := fmt.Sprint(r.Cell.Level)
		if r.Cell.Bypass {
			level += " (journal bypass)"
		}
		fmt.Fprintf(&b, "| %s %s | %s | %s | %s | %d of %d | %s | %.1f | %s |\n",
			title(r.Cell.System), r.Version, level, r.Settings, yesNo(r.Cell.PromisesSync()),
			r.Coverage.AfterSync, r.Coverage.Acks, latency, r.SyncsPerMessage(), verdict)
	}
	return b.String()
}

func startWorker(ctx context.Context, drivers map[v1alpha1.System]worker.DriverFactory) (string, <-chan struct{}, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	w := worker.New(worker.Options{Name: "durability-experiment", Drivers: drivers, FlushTimeout: 30 * time.Second})
	done := make(chan struct{})
	go func() { defer close(done); _ = worker.ServeListener(ctx, ln, w) }()
	return "http://" + ln.Addr().String(), done, nil
}

// shimLoaded checks /proc/<pid>/maps of every broker for the shim library.
func shimLoaded(pids []int, env []string) error {
	lib := strings.TrimPrefix(env[0], "LD_PRELOAD=")
	for _, pid := range pids {
		maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
		if err != nil {
			return fmt.Errorf("experiment: reading the memory map of broker pid %d: %w", pid, err)
		}
		if !strings.Contains(string(maps), lib) {
			return fmt.Errorf("experiment: broker pid %d does not have %s loaded; LD_PRELOAD did not reach it, so no sync is delayed", pid, lib)
		}
	}
	return nil
}

func sameMap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// SyncCalls lists a result's delayed calls, most frequent first, for logs.
func SyncCalls(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] || m[keys[i]] == m[keys[j]] && keys[i] < keys[j] })
	s := make([]string, len(keys))
	for i, k := range keys {
		s[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(s, ", ")
}

func ms(d time.Duration) string { return trimMs(d) + " ms" }

func trimMs(d time.Duration) string {
	return fmt.Sprintf("%.2f", float64(d.Microseconds())/1000)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func title(s v1alpha1.System) string {
	if s == v1alpha1.SystemKafka {
		return "Kafka"
	}
	return "Pulsar"
}
