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
	"sync"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/coordinator"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/localbrokers"
	"github.com/streambench/streambench-operator/internal/ombdriver"
	"github.com/streambench/streambench-operator/internal/pagecache"
	"github.com/streambench/streambench-operator/internal/report"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/stats"
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
	// WorkloadFile, if set, is an OMB workload file that replaces
	// spec.workload.
	WorkloadFile string
	// DriverFile, if set, is an OMB driver file (driver-kafka/kafka*.yaml,
	// driver-pulsar/pulsar*.yaml) mapped onto spec.driver; settings written
	// in spec.driver win over the file's.
	DriverFile string
	// ResultsDir is where results/<run-name>/ goes (default "results").
	ResultsDir string
	// DataDir holds the brokers' data and logs, kept after the run (default:
	// a temporary directory, removed with the brokers).
	DataDir string
	// Stdout receives the summary table, Stderr the progress (default
	// os.Stdout and os.Stderr).
	Stdout, Stderr io.Writer
	// SnapshotInterval is the stats interval, and so the progress interval
	// (default 10 s, as OMB).
	SnapshotInterval time.Duration
	// Signals replaces the process's SIGINT and SIGTERM (tests). The first
	// signal stops the run gracefully: the workers stop, the topics are
	// deleted, the brokers are stopped; the second kills the broker JVMs at
	// once and returns without waiting for the rest.
	Signals <-chan os.Signal
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
}

// ErrInterrupted is returned when a signal stopped the run.
var ErrInterrupted = errors.New("interrupted")

// Run runs one BenchmarkRun locally. Whatever happens (an error, Ctrl-C,
// SIGTERM) the brokers it started are stopped before it returns; the
// Outcome holds what was measured and written so far, also with an error.
func Run(ctx context.Context, o Options) (out *Outcome, err error) {
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	if o.ResultsDir == "" {
		o.ResultsDir = "results"
	}
	if o.SnapshotInterval <= 0 {
		o.SnapshotInterval = 10 * time.Second
	}
	say := func(format string, args ...any) { fmt.Fprintf(o.Stderr, "==> "+format+"\n", args...) }

	run := o.Run.DeepCopy()
	if run == nil {
		if run, err = Load(o.RunFile, o.WorkloadFile); err != nil {
			return nil, err
		}
	}
	eff, err := durability.TranslateFor(run.Spec.System, localVersion(run), run.Spec.DurabilityOrDefault())
	if err != nil {
		return nil, err
	}
	if d := run.Spec.Driver; d != nil && d.ConfigMapRef != nil {
		// The same run file serves a cluster, where the driver file is in a
		// ConfigMap; here there is no cluster to read it from.
		if o.DriverFile == "" {
			return nil, fmt.Errorf("spec.driver.configMapRef (ConfigMap %s) is read in a cluster only; in local mode give the same OMB driver file with --driver FILE", d.ConfigMapRef.Name)
		}
		say("--driver %s stands for spec.driver.configMapRef (ConfigMap %s)", o.DriverFile, d.ConfigMapRef.Name)
		d.ConfigMapRef = nil
	}
	if o.DriverFile != "" {
		drv, dropped, err := LoadDriverFile(o.DriverFile, run.Spec.System, eff)
		if err != nil {
			return nil, err
		}
		for _, d := range dropped {
			say("--driver %s: not applied: %s", o.DriverFile, d)
		}
		run.Spec.Driver = ombdriver.Merge(drv, run.Spec.Driver)
	}
	if run.Spec.Cluster.Managed != nil {
		// Stop before anything starts: without Java and Maven no broker can.
		if err := localbrokers.CheckJava(); err != nil {
			return nil, err
		}
	}
	out = &Outcome{Run: run, Durability: eff, Dir: filepath.Join(o.ResultsDir, run.Name)}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var b *brokers
	var bMu sync.Mutex
	killed := make(chan struct{})
	stopSignals := handleSignals(o.Signals, func(n int, s os.Signal) {
		if n == 1 {
			say("%s: stopping the run, then the brokers (press Ctrl-C again to kill the brokers at once)", s)
			cancel(ErrInterrupted)
			return
		}
		bMu.Lock()
		cur := b
		bMu.Unlock()
		say("%s again: killing the broker JVMs (pids %v)", s, cur.Pids())
		if err := cur.kill(); err != nil {
			say("%v", err)
		}
		select {
		case <-killed:
		default:
			close(killed)
		}
	})
	defer stopSignals()

	printHeader(o.Stderr, run, eff, o.WorkloadFile)
	notes := LocalNotes(run)
	for _, n := range notes[1:] {
		say("note: %s", n)
	}

	dataDir := o.DataDir
	if dataDir != "" {
		if dataDir, err = filepath.Abs(dataDir); err != nil {
			return out, err
		}
	}
	started := time.Now()
	if run.Spec.Cluster.Managed != nil {
		say("starting %s (jars are fetched with Maven into %s on first use)", brokerWhat(run), localbrokers.CacheDir())
	}
	bs, err := startBrokers(ctx, run, eff, dataDir, func(format string, args ...any) { say(format, args...) })
	if err != nil {
		return out, interrupted(ctx, err)
	}
	bMu.Lock()
	b = bs
	bMu.Unlock()
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
	if run.Spec.Cluster.Managed != nil {
		say("brokers ready after %s", time.Since(started).Round(time.Second))
	}
	tb := probeLocal(bs, func(format string, args ...any) { say(format, args...) })
	var pageCache coordinator.PageCacheDropper
	if run.Spec.Testbed != nil && run.Spec.Testbed.DropPageCache {
		if run.Spec.Cluster.Managed == nil {
			tb.PageCacheDrops = append(tb.PageCacheDrops, v1alpha1.PageCacheDrop{Reason: pagecache.ReasonBeforeLoad, At: metav1.Now(),
				Message: "spec.testbed.dropPageCache: an existing cluster's brokers do not run on this machine, so their page cache cannot be dropped from here; drop it on the broker hosts by hand"})
		} else {
			// As in a cluster: once before the load, after the probe
			// (whose writes fill the cache), and, through the coordinator,
			// before a backlog is drained.
			hd := newHostDropper(func(format string, args ...any) { say(format, args...) })
			d, _ := hd.DropPageCache(ctx, pagecache.ReasonBeforeLoad)
			tb.PageCacheDrops = append(tb.PageCacheDrops, d)
			if d.Dropped {
				tb.PageCacheDropped = &d.At
			}
			pageCache = hd
		}
	}

	// The workers and the coordinator log to a file: the terminal shows
	// the progress lines instead.
	if err := os.MkdirAll(out.Dir, 0o755); err != nil {
		return out, err
	}
	logPath := filepath.Join(out.Dir, "run.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return out, err
	}
	defer logFile.Close()
	logger := log.New(logFile, "", log.LstdFlags|log.Lmicroseconds)

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

	runCtx, cancelRun := context.WithTimeout(ctx, runTimeout(run))
	defer cancelRun()
	say("running %q with %d workers: topics, producers and consumers first, then the load (log: %s)",
		run.Spec.Workload.Name, len(urls), logPath)
	type ran struct {
		res *coordinator.Result
		err error
	}
	done := make(chan ran, 1)
	go func() {
		res, err := coordinator.Run(runCtx, coordinator.Options{
			Workers: urls,
			Driver: driver.Config{
				System: run.Spec.System, Brokers: bs.endpoints, Durability: eff,
				Overrides: run.Spec.Driver, RunID: fmt.Sprintf("%s-%d", run.Name, time.Now().Unix()),
			},
			Workload: run.Spec.Workload, PayloadData: payload,
			SnapshotInterval: o.SnapshotInterval,
			// Brokers this run did not start are read, not assumed.
			ReadDurability: run.Spec.Cluster.Existing != nil,
			Logf:           logger.Printf,
			Progress:       func(p coordinator.Progress) { fmt.Fprintln(o.Stderr, FormatProgress(p)) },
			PageCache:      pageCache,
		})
		done <- ran{res, err}
	}()
	var r ran
	select {
	case r = <-done:
	case <-killed:
		wasKilled = true
		// The brokers are gone; the coordinator's clean-up would only
		// wait for them. The workers and the coordinator live in this
		// process and end with it.
		return out, fmt.Errorf("%w twice: the broker JVMs were killed; the run's results were not written", ErrInterrupted)
	}
	if r.res != nil {
		out.Accounting = r.res.Accounting
		if d := r.res.Durability; d != nil {
			out.Durability = *d
			say("durability read from the existing brokers: %s", DescribeDurability(*d))
		}
	}
	runErr := interrupted(ctx, r.err)
	if r.res == nil || len(stats.OfPhase(r.res.Snapshots, stats.PhaseMeasure)) == 0 {
		return out, runErr
	}

	in := r.res.ResultsInput(run.Name, "", &eff)
	tb.PageCacheDrops = append(tb.PageCacheDrops, r.res.PageCacheDrops...)
	in.Testbed = tb
	in.Notes = append(in.Notes, notes...)
	if o.WorkloadFile != "" {
		in.Notes = append(in.Notes, "spec.workload was replaced by the workload file "+filepath.Base(o.WorkloadFile))
	}
	if runErr != nil {
		in.Notes = append(in.Notes, "the run did not finish: "+runErr.Error())
	}
	sum, werr := coordinator.WriteFiles(out.Dir, in)
	if werr != nil {
		return out, errors.Join(runErr, fmt.Errorf("writing the results to %s: %w", out.Dir, werr))
	}
	out.Summary = sum
	out.Report, werr = report.RenderDir(out.Dir)
	if werr != nil {
		werr = fmt.Errorf("writing the HTML report: %w", werr)
	}
	PrintSummary(o.Stdout, sum, out.Dir, out.Report, runErr == nil)
	return out, errors.Join(runErr, werr)
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
		return fmt.Sprintf("Pulsar %s standalone with %d bookies", localbrokers.DefaultPulsarVersion, cmpOr(m.Bookies, 3))
	}
	return fmt.Sprintf("%d Kafka %s brokers", m.Brokers, localbrokers.DefaultKafkaVersion)
}

// LoadDriverFile reads an OMB driver file and maps it onto spec.driver for
// a run of system at the effective durability eff; errors name the file.
func LoadDriverFile(path string, system v1alpha1.System, eff v1alpha1.EffectiveDurability) (*v1alpha1.DriverSpec, []ombdriver.Dropped, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("--driver: %w", err)
	}
	f, err := ombdriver.Parse(data)
	if err != nil {
		return nil, nil, fmt.Errorf("--driver %s: %w", path, err)
	}
	drv, dropped, err := ombdriver.Map(f, system, eff)
	if err != nil {
		return nil, dropped, fmt.Errorf("--driver %s: %w", path, err)
	}
	return drv, dropped, nil
}
