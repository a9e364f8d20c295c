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
	"os"
	"path/filepath"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/coordinator"
	"github.com/streambench/streambench-operator/internal/cost"
	"github.com/streambench/streambench-operator/internal/driver/kafka"
	"github.com/streambench/streambench-operator/internal/outcome"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/thresholds"
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
	// PriceModelFile, if set, is a price model (docs/cost.md) that prices
	// the results instead of spec.cost's or the default list prices.
	PriceModelFile string
	// prices is the price model resolved from PriceModelFile or spec.cost
	// (nil: the default), set by Run.
	prices *cost.PriceModel
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
	// aimBookie, when set (tests only), names each Pulsar fault's bookie
	// anew at its time from the first topic's current ensemble: with more
	// bookies than the ensemble, the bookie experiment takes one the
	// writes use.
	aimBookie aimBookie
	// flushTimeout, when set (tests only), bounds the workers' wait for
	// their sends at the load's end: a test whose writes cannot resume
	// need not wait the worker's minute.
	flushTimeout time.Duration
	// keepKilledDown, when set (tests only), leaves a killed broker down
	// instead of starting it again: the session-timeout experiment
	// isolates the fencing from the broker's return.
	keepKilledDown bool
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
	if o.prices, err = localPrices(o.PriceModelFile, run); err != nil {
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
	urls, workersDone, err := startWorkers(workerCtx, int(run.Spec.Workers.Count), o.flushTimeout)
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
