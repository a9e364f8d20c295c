// Package localrun is streambench's local mode (`streambench run -f FILE
// --local`): it reads a BenchmarkRun file as the API server would (strict,
// defaulted, validated), starts the brokers it asks for as local JVM
// processes (internal/localbrokers), runs the workers and the coordinator
// in this process against them, shows progress while the load runs, and
// leaves the same results a cluster run does (summary.json,
// omb-result.json) plus an HTML report, in results/<run-name>/.
package localrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/brokerres"
	"github.com/streambench/streambench-operator/internal/coordinator"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/driver/kafka"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/faults"
	"github.com/streambench/streambench-operator/internal/localbrokers"
	"github.com/streambench/streambench-operator/internal/ombdriver"
	"github.com/streambench/streambench-operator/internal/outcome"
	"github.com/streambench/streambench-operator/internal/pagecache"
	"github.com/streambench/streambench-operator/internal/report"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/stats"
	"github.com/streambench/streambench-operator/internal/thresholds"
	"github.com/streambench/streambench-operator/internal/worker"
	"github.com/streambench/streambench-operator/internal/workload"
)

// Options configure one local run.
type Options struct {
	// RunFile is the BenchmarkRun YAML.
	RunFile string
	// Run, when set, is run instead of RunFile's: a suite's cell, built
	// by internal/suite and defaulted and validated as a file would be.
	Run *v1alpha1.BenchmarkRun
	// BrokerJVM, if set, replaces the local brokers' heap, collector and
	// compiler options (localbrokers.DefaultJVMArgs, PulsarJVM).
	BrokerJVM []string
	// WorkloadFile, if set, is an OMB workload file that replaces
	// spec.workload.
	WorkloadFile string
	// DriverFile, if set, is an OMB driver file (driver-kafka/kafka*.yaml,
	// driver-pulsar/pulsar*.yaml) mapped onto spec.driver; settings written
	// in spec.driver win over the file's. Its security keys (Kafka's
	// security.protocol, sasl.*, ssl.*; Pulsar's TLS and authentication)
	// are mapped too, with the stores and files they name on this machine.
	DriverFile string
	// SecretsFile, if set, holds the Secret manifests (as kubectl apply
	// takes them) that spec.cluster.existing.tls and authentication name.
	SecretsFile string
	// ResultsDir is where results/<run-name>/ goes (default "results").
	ResultsDir string
	// DataDir holds the brokers' data and logs, kept after the run (default:
	// a temporary directory, removed with the brokers).
	DataDir string
	// Stdout receives the summary table, Stderr the progress (default
	// os.Stdout and os.Stderr).
	Stdout, Stderr io.Writer
	// SnapshotInterval is the stats interval, and so the progress interval
	// (default 10 s, as OMB; faults.Interval for a run with faults).
	SnapshotInterval time.Duration
	// Repeats runs the load this many times on the same brokers, each
	// repeat with fresh topics and its own results in repeat-<i>/; the
	// run's summary.json is then the median of each figure over the
	// repeats, in its interval (results.Aggregate), which compare tests
	// for differences. 0: the run's spec.repeats (once without).
	Repeats int
	// Signals replaces the process's SIGINT and SIGTERM (tests). The first
	// signal stops the run gracefully: the workers stop, the topics are
	// deleted, the brokers are stopped; the second kills the broker JVMs at
	// once and returns without waiting for the rest.
	Signals <-chan os.Signal

	// aimFault, when set (tests only), names each fault's target anew at
	// its time, from who serves the first topic's partition 0 then:
	// spec.faults can name the leader but not a follower, which the
	// follower-stall test needs (faults_run_test.go).
	aimFault func(v1alpha1.FaultTarget, kafka.PartitionState) v1alpha1.FaultTarget
}

// Outcome is what a local run left behind.
type Outcome struct {
	Run        *v1alpha1.BenchmarkRun
	Durability v1alpha1.EffectiveDurability
	// Dir is results/<run-name>; Summary what was written there as
	// summary.json; Report the HTML report's path.
	Dir     string
	Summary *results.Summary
	Report  string
	// BrokerPids are the broker JVMs the run started (and stopped).
	BrokerPids []int
	// Accounting is the exact delivery record.
	Accounting coordinator.Accounting
	// Faults are what became of spec.faults, every repeat's (as in each
	// repeat's summary.json).
	Faults []v1alpha1.FaultStatus
	// Thresholds is spec.thresholds checked on Summary; nil without any.
	Thresholds *thresholds.Outcome
}

// ErrInterrupted is returned when a signal stopped the run.
var ErrInterrupted = errors.New("interrupted")

// Run runs one BenchmarkRun locally. Whatever happens (an error, Ctrl-C,
// SIGTERM) the brokers it started are stopped before it returns; the
// Outcome holds what was measured and written so far, also with an error.
//
// The steps, each below: prepare (read and translate the run, its driver
// file), start the system under test, probe the testbed, start the
// workers, coordinate the load, write the results.
func Run(ctx context.Context, o Options) (out *Outcome, err error) {
	o.defaults()
	say := sayTo(o.Stderr)

	run, eff, fileSec, err := prepare(o, say)
	if err != nil {
		return nil, err
	}
	o.SnapshotInterval = snapshotInterval(o.SnapshotInterval, run)
	if o.Repeats == 0 {
		// As in a cluster: the file's spec.repeats, unless the command
		// line says otherwise.
		o.Repeats = run.Spec.RepeatCount()
	}
	out = &Outcome{Run: run, Durability: eff, Dir: filepath.Join(o.ResultsDir, run.Name)}
	// spec.thresholds, once the run is over and its results written: a
	// failed bound makes the run's error (and the command's exit code).
	defer func() {
		if err == nil {
			err = gate(o.Stdout, run, out)
		}
	}()
	sec, secNotes, err := prepareSecurity(run, o.SecretsFile, fileSec, o.DriverFile)
	if err != nil {
		return out, err
	}
	// The Secrets' values and the driver file's secrets live in a private
	// directory only while the run does.
	defer sec.cleanup()

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sig := watchSignals(o.Signals, cancel, say)
	defer sig.stop()

	printHeader(o.Stderr, run, eff, o.WorkloadFile)
	notes := LocalNotes(run)
	for _, n := range notes[1:] {
		say("note: %s", n)
	}
	for _, n := range secNotes {
		say("note: %s", n)
	}
	if sec.driver != nil {
		say("clients: %s (secret material in %s, removed at the end)", DescribeSecurity(run.Spec.System, sec.driver), sec.dir)
	}

	bs, err := startSystem(ctx, run, eff, o.DataDir, o.BrokerJVM, say)
	if err != nil {
		return out, err
	}
	sig.brokersStarted(bs)
	out.BrokerPids = bs.Pids()
	defer func() {
		if len(bs.Pids()) == 0 {
			return
		}
		say("stopping the brokers (pids %v)", bs.Pids())
		if serr := bs.stop(); serr != nil {
			err = errors.Join(err, fmt.Errorf("stopping the brokers: %w", serr))
		}
	}()
	tb, pageCache := prepareTestbed(ctx, run, bs, say)

	// The workers and the coordinator log to a file: the terminal shows
	// the progress lines instead.
	logger, logPath, closeLog, err := openRunLog(out.Dir)
	if err != nil {
		return out, err
	}
	defer closeLog()

	workerCtx, stopWorkers := context.WithCancel(context.Background())
	urls, workersDone, err := startWorkers(workerCtx, int(run.Spec.Workers.Count))
	wasKilled := false
	defer func() {
		stopWorkers()
		// After a kill the workers' clients may wait on brokers that are
		// gone; they end with the process.
		if !wasKilled {
			workersDone()
		}
	}()
	if err != nil {
		return out, err
	}
	var payload []byte
	if p := run.Spec.Workload.PayloadFile; p != "" {
		if payload, err = os.ReadFile(p); err != nil {
			return out, fmt.Errorf("spec.workload.payloadFile: %w", err)
		}
	}

	ses := &session{o: o, out: out, run: run, eff: eff, bs: bs, sig: sig, sec: sec, tb: tb, pageCache: pageCache,
		logger: logger, logPath: logPath, urls: urls, payload: payload, notes: notes}
	var done []outcome.Repeat
	var dirs []string
	for i := 1; i <= o.repeats(); i++ {
		rep := repeat{of: o.repeats(), dir: out.Dir, runID: fmt.Sprintf("%s-%d", run.Name, time.Now().Unix())}
		if rep.of > 1 {
			rep.index = i
			rep.rel = fmt.Sprintf("repeat-%d", i)
			rep.dir = filepath.Join(out.Dir, rep.rel)
			rep.runID = fmt.Sprintf("%s-r%d-%d", run.Name, i, time.Now().Unix())
			say("repeat %d of %d (fresh topics, the same brokers): results in %s", i, rep.of, rep.dir)
		}
		one, err, killed := ses.runOnce(ctx, rep)
		if killed {
			wasKilled = true
			return out, err
		}
		if one != nil {
			done = append(done, *one)
			dirs = append(dirs, rep.rel)
		}
		if err != nil || rep.of == 1 {
			// A repeat that failed ends the run: the repeats after it would
			// compare against a system in another state. The ones done are
			// aggregated below.
			return out, errors.Join(err, conclude(o, out, done, dirs))
		}
	}
	return out, conclude(o, out, done, dirs)
}

// ErrThresholds is the error of a run whose results failed a bound of
// spec.thresholds.
var ErrThresholds = errors.New("thresholds failed")

// gate prints spec.thresholds checked on what the run wrote (a repeated
// run's aggregate), as the controller's condition ThresholdsMet.
func gate(w io.Writer, run *v1alpha1.BenchmarkRun, out *Outcome) error {
	if out.Thresholds == nil {
		return nil
	}
	o := *out.Thresholds
	for _, c := range o.Checks {
		verdict := "met   "
		if !c.Met {
			verdict = "FAILED"
		}
		fmt.Fprintf(w, "threshold   %s %s\n", verdict, c)
	}
	if !o.Met() {
		return fmt.Errorf("%w: %s", ErrThresholds, o.Message())
	}
	return nil
}

// repeat is one repeat of a run (the run itself when it is not repeated).
type repeat struct {
	// of is how many repeats the run has; index this one's, from 1, or 0
	// for a run that is not repeated (status.faults' repeat).
	of, index int
	// dir is where its results go; rel the same relative to the run's
	// results directory ("" for a run not repeated).
	dir, rel string
	runID    string
}

// repeats is how many times the run is repeated, at least once.
func (o Options) repeats() int { return max(o.Repeats, 1) }

// session is what a run's repeats share: its options and outcome so
// far, the run as translated, the brokers, signals, client security and
// testbed set up once, the run's log, the workers and the payload, and
// the notes every repeat's results carry.
type session struct {
	o         Options
	out       *Outcome
	run       *v1alpha1.BenchmarkRun
	eff       v1alpha1.EffectiveDurability
	bs        *brokers
	sig       *signals
	sec       *runSecurity
	tb        *v1alpha1.Testbed
	pageCache coordinator.PageCacheDropper
	logger    *log.Logger
	logPath   string
	urls      []string
	payload   []byte
	notes     []string
}

// runOnce coordinates one repeat on the running brokers and writes its
// results; it returns them as the coordinator summarized them, for the
// run's outcome (nil when nothing was measured). killed: the broker JVMs
// were killed (the second signal).
func (s *session) runOnce(ctx context.Context, rep repeat) (_ *outcome.Repeat, _ error, killed bool) {
	notes := slices.Clone(s.notes)
	sampler := startBrokerSampler(s.bs)
	defer func() {
		if sampler != nil {
			sampler.Stop()
		}
	}()
	runCtx, cancelRun := context.WithTimeout(ctx, runTimeout(s.run))
	defer cancelRun()
	say := sayTo(s.o.Stderr)
	// spec.faults, timed from the measured phase's start as the
	// coordinator reports it (OnMeasure), so a warm-up, a rate search or a
	// backlog of any length comes first, as in a cluster.
	lookup := kafkaLeader(s.bs.endpoints.BootstrapServers, s.sec.driver, rep.runID)
	find := kafkaProcs(s.bs.kafka, lookup)
	if s.o.aimFault != nil {
		find = aimed(find, lookup, s.o.aimFault)
	}
	inj := startFaults(runCtx, s.run.Spec.Faults, rep.index, find, signalPid, say)
	defer inj.finish()
	say("running %q with %d workers: topics, producers and consumers first, then the load (log: %s)",
		s.run.Spec.Workload.Name, len(s.urls), s.logPath)
	res, runErr, killed := coordinate(runCtx, s.sig.killed, coordinator.Options{
		Workers: s.urls,
		Driver: driver.Config{
			System: s.run.Spec.System, Brokers: s.bs.endpoints, Durability: s.eff,
			Overrides: s.run.Spec.Driver, RunID: rep.runID,
			Security: s.sec.driver,
		},
		Workload: s.run.Spec.Workload, PayloadData: s.payload,
		SnapshotInterval: s.o.SnapshotInterval,
		// The workers are goroutines of this process: one clock.
		SameClock: true,
		// Brokers this run did not start are read, not assumed.
		ReadDurability: s.run.Spec.Cluster.Existing != nil,
		Logf:           s.logger.Printf,
		Progress:       func(p coordinator.Progress) { fmt.Fprintln(s.o.Stderr, FormatProgress(p)) },
		PageCache:      s.pageCache,
		OnMeasure:      inj.measureStarted,
	})
	faultStatus := inj.finish()
	s.out.Faults = append(s.out.Faults, faultStatus...)
	if killed {
		// The brokers are gone; the coordinator's clean-up would only
		// wait for them. The workers and the coordinator live in this
		// process and end with it.
		return nil, fmt.Errorf("%w twice: the broker JVMs were killed; the run's results were not written", ErrInterrupted), true
	}
	if res != nil {
		s.out.Accounting = res.Accounting
		if d := res.Durability; d != nil {
			s.out.Durability = *d
			say("durability read from the existing brokers: %s", DescribeDurability(*d))
		}
	}
	runErr = s.sec.explain(interrupted(ctx, runErr))
	if res == nil || len(stats.OfPhase(res.Snapshots, stats.PhaseMeasure)) == 0 {
		return nil, runErr, false
	}
	br, brNote := brokerResources(sampler, res)
	if brNote != "" {
		notes = append(notes, brNote)
	}
	if s.bs.javaError != "" {
		notes = append(notes, "the brokers' Java version was not read ("+s.bs.javaError+"): compare cannot tell whether another run's brokers ran on the same major")
	}
	notes = append(notes, resultNotes(s.o, runErr)...)
	one, err := s.writeResults(rep, res, br, faultStatus, notes, runErr == nil)
	return one, errors.Join(runErr, err), false
}

// conclude finishes the run as a cluster run is finished
// (internal/outcome): every repeat's faults with their impact, the
// thresholds' verdict, and for a repeated run the aggregate of its
// repeats as dir's summary.json (the median of each figure in its
// interval, results.Aggregate), printed. done are the repeats with
// results, as the coordinator summarized them; dirs their directories.
func conclude(o Options, out *Outcome, done []outcome.Repeat, dirs []string) error {
	if len(done) == 0 {
		return nil
	}
	in := outcome.Input{Repeats: done, Repeated: o.repeats() > 1, Faults: out.Faults, Thresholds: out.Run.Spec.Thresholds}
	if len(done) >= 2 {
		sums := make([]*results.Summary, len(done))
		for i, r := range done {
			sums[i] = r.Summary
		}
		agg, err := results.Aggregate(sums, dirs)
		if err != nil {
			return err
		}
		in.Aggregate = agg
	}
	fin, err := outcome.Finish(in)
	if err != nil {
		return err
	}
	out.Faults, out.Summary, out.Thresholds = fin.Faults, fin.Summary, fin.Thresholds
	if in.Aggregate == nil {
		return nil
	}
	if err := coordinator.WriteSummary(out.Dir, fin.Summary); err != nil {
		return fmt.Errorf("writing the repeated run's summary: %w", err)
	}
	out.Report, err = report.RenderDir(out.Dir)
	if err != nil {
		err = fmt.Errorf("writing the repeated run's HTML report: %w", err)
	}
	PrintRepeats(o.Stdout, fin.Summary, out.Dir, out.Report)
	return err
}

// defaults fills the options' defaults.
func (o *Options) defaults() {
	o.Stdout, o.Stderr, o.ResultsDir = outputDefaults(o.Stdout, o.Stderr, o.ResultsDir)
}

// snapshotInterval is the stats interval of run: the one asked for, else
// faults.Interval for a run with faults (a fault's recovery is read over
// three intervals, which at 10 s would be 30 s), else OMB's 10 s. It is
// decided once the run is read, so a run from a file (the command's -f)
// gets the same as one given whole.
func snapshotInterval(asked time.Duration, run *v1alpha1.BenchmarkRun) time.Duration {
	switch {
	case asked > 0:
		return asked
	case len(run.Spec.Faults) > 0:
		return faults.Interval
	}
	return 10 * time.Second
}

// outputDefaults are where a local run or suite writes when not told:
// the terminal, and results/.
func outputDefaults(stdout, stderr io.Writer, resultsDir string) (io.Writer, io.Writer, string) {
	if stdout == nil {
		stdout = os.Stdout
	}
	if stderr == nil {
		stderr = os.Stderr
	}
	if resultsDir == "" {
		resultsDir = "results"
	}
	return stdout, stderr, resultsDir
}

// sayTo prints local mode's "==> " progress lines to w.
func sayTo(w io.Writer) func(format string, args ...any) {
	return func(format string, args ...any) { fmt.Fprintf(w, "==> "+format+"\n", args...) }
}

// prepare reads the run (the given one, or the file admitted by the CRD),
// translates its durability for the broker version local mode starts, and
// maps an OMB driver file onto spec.driver (and its security keys, if any);
// it stops before anything starts when managed brokers cannot (no Java).
func prepare(o Options, say func(string, ...any)) (*v1alpha1.BenchmarkRun, v1alpha1.EffectiveDurability, *ombdriver.Security, error) {
	var eff v1alpha1.EffectiveDurability
	run := o.Run.DeepCopy()
	if run == nil {
		var err error
		if run, err = Load(o.RunFile, o.WorkloadFile); err != nil {
			return nil, eff, nil, err
		}
	}
	eff, err := durability.TranslateFor(run.Spec.System, localVersion(run), run.Spec.DurabilityOrDefault())
	if err != nil {
		return nil, eff, nil, err
	}
	if d := run.Spec.Driver; d != nil && d.ConfigMapRef != nil {
		// The same run file serves a cluster, where the driver file is in a
		// ConfigMap; here there is no cluster to read it from.
		if o.DriverFile == "" {
			return nil, eff, nil, fmt.Errorf("spec.driver.configMapRef (ConfigMap %s) is read in a cluster only; in local mode give the same OMB driver file with --driver FILE", d.ConfigMapRef.Name)
		}
		say("--driver %s stands for spec.driver.configMapRef (ConfigMap %s)", o.DriverFile, d.ConfigMapRef.Name)
		d.ConfigMapRef = nil
	}
	var fileSec *ombdriver.Security
	if o.DriverFile != "" {
		drv, sec, dropped, err := LoadDriverFile(o.DriverFile, run.Spec.System, eff)
		if err != nil {
			return nil, eff, nil, err
		}
		for _, d := range dropped {
			say("--driver %s: not applied: %s", o.DriverFile, d)
		}
		run.Spec.Driver = ombdriver.Merge(drv, run.Spec.Driver)
		fileSec = sec
	}
	if run.Spec.Cluster.Managed != nil {
		// Stop before anything starts: without Java and Maven no broker can.
		if err := localbrokers.CheckJava(); err != nil {
			return nil, eff, nil, err
		}
	}
	return run, eff, fileSec, nil
}

// signals is what the run's signal handler reaches: the first signal
// cancels the run, the second kills the brokers started so far and closes
// killed.
type signals struct {
	mu      sync.Mutex
	brokers *brokers
	killed  chan struct{}
	stop    func()
}

func watchSignals(given <-chan os.Signal, cancel context.CancelCauseFunc, say func(string, ...any)) *signals {
	s := &signals{killed: make(chan struct{})}
	s.stop = handleSignals(given, func(n int, sig os.Signal) {
		if n == 1 {
			say("%s: stopping the run, then the brokers (press Ctrl-C again to kill the brokers at once)", sig)
			cancel(ErrInterrupted)
			return
		}
		s.mu.Lock()
		cur := s.brokers
		s.mu.Unlock()
		say("%s again: killing the broker JVMs (pids %v)", sig, cur.Pids())
		if err := cur.kill(); err != nil {
			say("%v", err)
		}
		select {
		case <-s.killed:
		default:
			close(s.killed)
		}
	})
	return s
}

func (s *signals) brokersStarted(b *brokers) {
	s.mu.Lock()
	s.brokers = b
	s.mu.Unlock()
}

// startSystem starts the brokers the run asks for (or reaches the
// existing ones), with their data under dataDir when given.
func startSystem(ctx context.Context, run *v1alpha1.BenchmarkRun, eff v1alpha1.EffectiveDurability, dataDir string, jvm []string, say func(string, ...any)) (*brokers, error) {
	if dataDir != "" {
		var err error
		if dataDir, err = filepath.Abs(dataDir); err != nil {
			return nil, err
		}
	}
	started := time.Now()
	if run.Spec.Cluster.Managed != nil {
		say("starting %s (jars are fetched with Maven into %s on first use)", brokerWhat(run), localbrokers.CacheDir())
	}
	bs, err := startBrokers(ctx, run, eff, dataDir, jvm, say)
	if err != nil {
		return nil, interrupted(ctx, err)
	}
	if run.Spec.Cluster.Managed != nil {
		say("brokers ready after %s", time.Since(started).Round(time.Second))
	}
	return bs, nil
}

// prepareTestbed probes the brokers' disks and, when the spec asks,
// drops the page cache before the load; the dropper it returns lets the
// coordinator drop it again before a backlog is drained.
func prepareTestbed(ctx context.Context, run *v1alpha1.BenchmarkRun, bs *brokers, say func(string, ...any)) (*v1alpha1.Testbed, coordinator.PageCacheDropper) {
	tb := probeLocal(bs, say)
	if run.Spec.Testbed == nil || !run.Spec.Testbed.DropPageCache {
		return tb, nil
	}
	if run.Spec.Cluster.Managed == nil {
		tb.PageCacheDrops = append(tb.PageCacheDrops, v1alpha1.PageCacheDrop{Reason: pagecache.ReasonBeforeLoad, At: metav1.Now(),
			Message: "spec.testbed.dropPageCache: an existing cluster's brokers do not run on this machine, so their page cache cannot be dropped from here; drop it on the broker hosts by hand"})
		return tb, nil
	}
	// As in a cluster: once before the load, after the probe (whose
	// writes fill the cache), and, through the coordinator, before a
	// backlog is drained.
	hd := newHostDropper(say)
	d, _ := hd.DropPageCache(ctx, pagecache.ReasonBeforeLoad)
	tb.PageCacheDrops = append(tb.PageCacheDrops, d)
	if d.Dropped {
		tb.PageCacheDropped = &d.At
	}
	return tb, hd
}

// openRunLog creates dir/run.log for the workers' and the coordinator's log.
func openRunLog(dir string) (*log.Logger, string, func(), error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", nil, err
	}
	path := filepath.Join(dir, "run.log")
	f, err := os.Create(path)
	if err != nil {
		return nil, "", nil, err
	}
	return log.New(f, "", log.LstdFlags|log.Lmicroseconds), path, func() { _ = f.Close() }, nil
}

// coordinate runs the coordinator until it returns, or until killed is
// closed (the brokers were killed: its clean-up would only wait for them).
func coordinate(ctx context.Context, killed <-chan struct{}, o coordinator.Options) (_ *coordinator.Result, _ error, wasKilled bool) {
	type ran struct {
		res *coordinator.Result
		err error
	}
	done := make(chan ran, 1)
	go func() {
		res, err := coordinator.Run(ctx, o)
		done <- ran{res, err}
	}()
	select {
	case r := <-done:
		return r.res, r.err, false
	case <-killed:
		return nil, nil, true
	}
}

// resultNotes say in the results how this run differs from its file.
func resultNotes(o Options, runErr error) []string {
	var notes []string
	if o.WorkloadFile != "" {
		notes = append(notes, "spec.workload was replaced by the workload file "+filepath.Base(o.WorkloadFile))
	}
	if runErr != nil {
		notes = append(notes, "the run did not finish: "+runErr.Error())
	}
	return notes
}

// writeResults writes one repeat's results as a cluster run's results
// ConfigMap holds them into its directory, its faults with their impact
// (internal/outcome, as the run's will be), and the HTML report beside
// them, and prints the summary. It returns the repeat as the coordinator
// summarized it, for the run's outcome.
func (s *session) writeResults(rep repeat, res *coordinator.Result, br *brokerres.Report, fs []v1alpha1.FaultStatus, notes []string, finished bool) (*outcome.Repeat, error) {
	in := res.ResultsInput(s.run.Name, "", &s.eff)
	in.Brokers = s.bs.setup
	if tb := s.tb; tb != nil {
		// Each repeat's own page cache drops, on a copy of the testbed
		// the repeats share.
		t := *tb
		t.PageCacheDrops = append(append([]v1alpha1.PageCacheDrop(nil), tb.PageCacheDrops...), res.PageCacheDrops...)
		in.Testbed = &t
	}
	in.BrokerResources = br
	in.Notes = append(in.Notes, notes...)
	one, err := writeRepeat(rep.dir, in, res.MeasureStart, int32(rep.index), fs)
	if one == nil {
		return nil, fmt.Errorf("the results of %s: %w", rep.dir, err)
	}
	if err != nil {
		return &one.Repeat, fmt.Errorf("writing the results to %s: %w", rep.dir, err)
	}
	s.out.Summary = one.finished
	s.out.Report, err = report.RenderDir(rep.dir)
	if err != nil {
		err = fmt.Errorf("writing the HTML report: %w", err)
	}
	PrintSummary(s.o.Stdout, one.finished, rep.dir, s.out.Report, finished)
	return &one.Repeat, err
}

// written is a repeat whose files are written: as the coordinator
// summarized it, and finished (with its faults).
type written struct {
	outcome.Repeat
	finished *results.Summary
}

// writeRepeat writes summary.json, with the repeat's faults (fs, its
// status.faults number repeat) and their impact, and omb-result.json into
// dir.
func writeRepeat(dir string, in results.Input, start time.Time, repeat int32, fs []v1alpha1.FaultStatus) (*written, error) {
	sum, err := results.Summarize(in)
	if err != nil {
		return nil, err
	}
	one := &written{Repeat: outcome.Repeat{Summary: sum, MeasureStart: start}}
	one.finished, _ = outcome.FinishRepeat(one.Repeat, repeat, fs)
	return one, coordinator.WriteSummaryFiles(dir, one.finished, in)
}

// runTimeout is the run's deadline, the same as in a cluster.
func runTimeout(run *v1alpha1.BenchmarkRun) time.Duration {
	return workload.RunDeadline(run.Spec.Workload, run.Spec.Timeouts)
}

// interrupted names a signal as the cause of an error it caused.
func interrupted(ctx context.Context, err error) error {
	if err != nil && errors.Is(context.Cause(ctx), ErrInterrupted) {
		return fmt.Errorf("%w: %v", ErrInterrupted, err)
	}
	return err
}

// handleSignals calls on for every SIGINT or SIGTERM (or every value of
// the given channel) with its count, until the returned stop is called.
// signal.NotifyContext would only see the first: the second Ctrl-C must
// reach us too, or it would be swallowed while the brokers shut down.
func handleSignals(given <-chan os.Signal, on func(n int, s os.Signal)) (stop func()) {
	ch := given
	var own chan os.Signal
	if ch == nil {
		own = make(chan os.Signal, 2)
		signal.Notify(own, os.Interrupt, syscall.SIGTERM)
		ch = own
	}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		n := 0
		for {
			select {
			case <-quit:
				return
			case s := <-ch:
				n++
				on(n, s)
			}
		}
	}()
	return func() {
		if own != nil {
			signal.Stop(own)
		}
		close(quit)
		wg.Wait()
	}
}

// startWorkers serves n in-process workers over HTTP on loopback, as the
// worker pods of a cluster run are served, so the coordinator drives them
// through the same protocol.
func startWorkers(ctx context.Context, n int) (urls []string, wait func(), err error) {
	var wg sync.WaitGroup
	wait = wg.Wait
	for i := 0; i < n; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return urls, wait, fmt.Errorf("worker %d: %w", i, err)
		}
		w := worker.New(worker.Options{Name: fmt.Sprintf("worker-%d", i), Drivers: worker.DefaultDrivers()})
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = worker.ServeListener(ctx, ln, w)
		}()
		urls = append(urls, "http://"+ln.Addr().String())
	}
	return urls, wait, nil
}

// localVersion is the broker version local mode starts (whatever the spec
// pins: see LocalNotes), or "" for existing brokers, whose version is not
// known until read from them.
func localVersion(run *v1alpha1.BenchmarkRun) string {
	switch {
	case run.Spec.Cluster.Managed == nil:
		return ""
	case run.Spec.System == v1alpha1.SystemPulsar:
		return localbrokers.DefaultPulsarVersion
	}
	return localbrokers.DefaultKafkaVersion
}

func brokerWhat(run *v1alpha1.BenchmarkRun) string {
	m := run.Spec.Cluster.Managed
	if run.Spec.System == v1alpha1.SystemPulsar {
		return fmt.Sprintf("Pulsar %s standalone with %d bookies", localbrokers.DefaultPulsarVersion, m.BookiesOrDefault())
	}
	return fmt.Sprintf("%d Kafka %s brokers", m.Brokers, localbrokers.DefaultKafkaVersion)
}

// LoadDriverFile reads an OMB driver file and maps it onto spec.driver for
// a run of system at the effective durability eff, with its security keys
// (nil for a plaintext, anonymous client; its secrets are read when
// written, by prepareSecurity); errors name the file.
func LoadDriverFile(path string, system v1alpha1.System, eff v1alpha1.EffectiveDurability) (*v1alpha1.DriverSpec, *ombdriver.Security, []ombdriver.Dropped, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("--driver: %w", err)
	}
	f, err := ombdriver.Parse(data)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("--driver %s: %w", path, err)
	}
	drv, sec, dropped, err := ombdriver.MapWithSecurity(f, system, eff)
	if err != nil {
		return nil, nil, dropped, fmt.Errorf("--driver %s: %w", path, err)
	}
	return drv, sec, dropped, nil
}
