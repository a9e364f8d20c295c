package localrun

// What a local run sets up before its first repeat: the run read and
// translated, its output, the brokers, the testbed, the run's log and
// the workers.

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/coordinator"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/faults"
	"github.com/streambench/streambench-operator/internal/localbrokers"
	"github.com/streambench/streambench-operator/internal/ombdriver"
	"github.com/streambench/streambench-operator/internal/pagecache"
	"github.com/streambench/streambench-operator/internal/worker"
)

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

// startWorkers serves n in-process workers over HTTP on loopback, as the
// worker pods of a cluster run are served, so the coordinator drives them
// through the same protocol. flush bounds a worker's wait for its sends at
// the load's end (0: the worker's default).
func startWorkers(ctx context.Context, n int, flush time.Duration) (urls []string, wait func(), err error) {
	var wg sync.WaitGroup
	wait = wg.Wait
	for i := 0; i < n; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return urls, wait, fmt.Errorf("worker %d: %w", i, err)
		}
		w := worker.New(worker.Options{Name: fmt.Sprintf("worker-%d", i), Drivers: worker.DefaultDrivers(), FlushTimeout: flush})
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
