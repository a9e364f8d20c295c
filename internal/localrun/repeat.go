package localrun

// One repeat of a local run on the brokers it started: its faults, the
// coordinator, and its results written as a cluster run's ConfigMap
// holds them (finish.go finishes the run).

import (
	"context"
	"errors"
	"fmt"
	"log"
	"path/filepath"
	"slices"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/brokerres"
	"github.com/streambench/streambench-operator/internal/coordinator"
	"github.com/streambench/streambench-operator/internal/cost"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/outcome"
	"github.com/streambench/streambench-operator/internal/report"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/stats"
	"github.com/streambench/streambench-operator/internal/workload"
)

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
	// A killed broker restarted: the second Ctrl-C kills its new pid.
	find := kafkaProcs(s.bs.kafka, lookup, func() { s.bs.setPids(s.bs.kafka.Pids()) })
	if s.o.aimFault != nil {
		find = aimed(find, lookup, s.o.aimFault)
	}
	if s.bs.pulsar != nil {
		topic := pulsarFirstTopic(rep.runID, s.run.Spec.Workload.PartitionsPerTopic)
		find = pulsarProcs(s.bs.pulsar, topic, s.o.aimBookie, func() { s.bs.setPids(s.bs.pulsar.Pids()) })
	}
	if s.o.keepKilledDown {
		find = keptDown(find)
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
		// A run with faults explains each stall by the brokers' settings.
		ReadFailureSettings: len(s.run.Spec.Faults) > 0,
		Logf:                s.logger.Printf,
		Progress:            func(p coordinator.Progress) { fmt.Fprintln(s.o.Stderr, FormatProgress(p)) },
		PageCache:           s.pageCache,
		OnMeasure:           inj.measureStarted,
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
	one, err := writeRepeat(rep.dir, in, res.MeasureStart, int32(rep.index), fs, s.o.prices)
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
// status.faults number repeat) and their impact and its cost under prices,
// and omb-result.json into dir.
func writeRepeat(dir string, in results.Input, start time.Time, repeat int32, fs []v1alpha1.FaultStatus, prices *cost.PriceModel) (*written, error) {
	sum, err := results.Summarize(in)
	if err != nil {
		return nil, err
	}
	one := &written{Repeat: outcome.Repeat{Summary: sum, MeasureStart: start}}
	one.finished, _ = outcome.FinishRepeat(one.Repeat, repeat, fs, prices)
	return one, coordinator.WriteSummaryFiles(dir, one.finished, in)
}

// runTimeout is the run's deadline, the same as in a cluster.
func runTimeout(run *v1alpha1.BenchmarkRun) time.Duration {
	return workload.RunDeadline(run.Spec.Workload, run.Spec.Timeouts)
}
