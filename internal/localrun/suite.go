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
	"github.com/streambench/streambench-operator/internal/admission"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/report"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/suite"
)

// SuiteOptions configure a local suite (`streambench suite -f FILE --local`).
type SuiteOptions struct {
	// SuiteFile is the BenchmarkSuite YAML.
	SuiteFile string
	// ResultsDir: the suite's results go to <results-dir>/<suite>/, each
	// cell's to <results-dir>/<suite>/<cell>/ (default "results").
	ResultsDir string
	// DataDir keeps the brokers' data and logs, one directory per cluster
	// (default: temporary, removed with the brokers).
	DataDir string
	// SecretsFile holds the Secret manifests that a secured existing
	// cluster's tls and authentication name (as Options.SecretsFile);
	// every cell reads it.
	SecretsFile string
	// PriceModelFile prices every cell (as Options.PriceModelFile).
	PriceModelFile   string
	Stdout, Stderr   io.Writer
	SnapshotInterval time.Duration
	// ClustersOneAtATime keeps a repeated suite on several clusters to one
	// cluster standing at a time (its repeats then alternate within each
	// cluster only), for a machine short of memory; see suiteMode.
	ClustersOneAtATime bool
}

// SuiteOutcome is what a local suite left behind.
type SuiteOutcome struct {
	// Suite carries the status the controller would have written:
	// clusters, cells and their headline figures.
	Suite *v1alpha1.BenchmarkSuite
	// Dir is <results-dir>/<suite>; Summaries the cells' summary.json.
	Dir       string
	Summaries map[string]*results.Summary
	// BrokerStarts counts the broker clusters started, per system.
	BrokerStarts map[v1alpha1.System]int
	// BrokerPids are the broker JVMs the suite started, every cluster's
	// (all stopped when RunSuite returns).
	BrokerPids []int
}

// LoadSuite reads a BenchmarkSuite file and admits it as the API server
// would (internal/admission: the CRD's pruning, defaults, OpenAPI and CEL
// rules). Each cell is then admitted as a BenchmarkRun file would be
// (runCell). What only a cluster can read is refused here.
func LoadSuite(path string) (*v1alpha1.BenchmarkSuite, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the BenchmarkSuite file: %w", err)
	}
	doc, err := singleDocument(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	obj, err := admission.Decode(doc)
	if err != nil {
		return nil, fmt.Errorf("%s: the file must hold one BenchmarkSuite: %w", path, err)
	}
	if obj["kind"] != "BenchmarkSuite" {
		return nil, fmt.Errorf("%s: kind is %q; streambench suite takes a BenchmarkSuite (streambench run takes a BenchmarkRun)", path, obj["kind"])
	}
	kind := admission.BenchmarkSuite()
	if err := kind.Explain(kind.Create(obj), nil); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var s v1alpha1.BenchmarkSuite
	if err := admission.FromObject(obj, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for i, w := range s.Spec.Workloads {
		if w.ConfigMapRef != nil {
			return nil, fmt.Errorf("%s: spec.workloads[%d].configMapRef is read in a cluster only; in local mode write the workload under spec.workloads[%d].spec", path, i, i)
		}
		// The CEL rules leave exactly one of spec and configMapRef.
		s.Status.Workloads = append(s.Status.Workloads, v1alpha1.ResolvedWorkload{Name: w.Name, Spec: *w.Spec})
	}
	// The brokers local mode starts have plaintext, anonymous listeners
	// only: a secured setting would be measured as plaintext and labelled
	// as secured.
	for i, sys := range s.Spec.Systems {
		if len(sys.Securities) > 0 {
			return nil, fmt.Errorf("%s: spec.systems[%d].securities: local mode starts brokers with plaintext, anonymous listeners only, so it cannot measure security settings; run the suite in a cluster (kubectl create -f %s), or remove securities to measure plaintext here", path, i, path)
		}
		if m := sys.Cluster.Managed; m != nil && m.Security.Secured() {
			return nil, fmt.Errorf("%s: spec.systems[%d].cluster.managed.security: local mode starts brokers with plaintext, anonymous listeners only; run the suite in a cluster (kubectl create -f %s), or remove cluster.managed.security to measure plaintext here", path, i, path)
		}
	}
	return &s, nil
}

// RunSuite runs a suite on this machine as the controller runs it in a
// cluster: the same plan (internal/suite), each managed system's brokers
// started once per broker setting its cells need, every cell a local run
// in existing mode against them, one at a time; then the study's tables.
// A repeated suite on several clusters stands them all at once and
// alternates its repeats between them (suiteMode), unless
// o.ClustersOneAtATime.
func RunSuite(ctx context.Context, o SuiteOptions) (*SuiteOutcome, error) {
	o.Stdout, o.Stderr, o.ResultsDir = outputDefaults(o.Stdout, o.Stderr, o.ResultsDir)
	say := sayTo(o.Stderr)
	s, err := LoadSuite(o.SuiteFile)
	if err != nil {
		return nil, err
	}
	plan, err := suite.New(s, s.Status.Workloads)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.SuiteFile, err)
	}
	s.Status.Clusters, s.Status.Cells = suite.Status(plan)
	s.Status.Phase = v1alpha1.PhaseRunning
	s.Status.Progress = suite.Progress(s.Status.Cells)
	out := &SuiteOutcome{Suite: s, Dir: filepath.Join(o.ResultsDir, s.Name), Summaries: map[string]*results.Summary{}, BrokerStarts: map[v1alpha1.System]int{}}
	say("suite %s: %d cells on %d clusters", s.Name, len(s.Status.Cells), len(s.Status.Clusters))
	mode, why := suiteMode(s, o.ClustersOneAtATime)
	say("%s", why)

	run := runClustersOneAtATime
	if mode == clustersTogether {
		run = runClustersTogether
	}
	errs, abort := run(ctx, s, o, out, say)
	if abort != nil {
		return out, abort
	}
	s.Status.Phase = v1alpha1.PhaseSucceeded
	for _, c := range s.Status.Cells {
		if c.Phase != v1alpha1.CellSucceeded {
			s.Status.Phase = v1alpha1.PhaseFailed
		}
	}
	if err := WriteSuiteResults(out.Dir, s, out.Summaries); err != nil {
		errs = append(errs, err)
	}
	if _, err := report.RenderSuiteDir(out.Dir); err != nil {
		errs = append(errs, fmt.Errorf("writing the suite's HTML report: %w", err))
	}
	tables, _ := os.ReadFile(filepath.Join(out.Dir, suite.KeyTables))
	fmt.Fprintf(o.Stdout, "\nSuite %s: %s, %s cells finished\n\n%s", s.Name, s.Status.Phase, s.Status.Progress, tables)
	fmt.Fprintf(o.Stdout, "results: %s (streambench report %s)\n", out.Dir, out.Dir)
	return out, errors.Join(errs...)
}

// runClustersOneAtATime starts a cluster, runs its cells in status order
// and stops it, cluster after cluster. errs are the cells' and the
// clusters' failures; abort ends the suite without its tables (ctx ended).
func runClustersOneAtATime(ctx context.Context, s *v1alpha1.BenchmarkSuite, o SuiteOptions, out *SuiteOutcome, say func(string, ...any)) (errs []error, abort error) {
	for i := range s.Status.Clusters {
		cl := &s.Status.Clusters[i]
		if err := ctx.Err(); err != nil {
			return errs, err
		}
		if allFinished(s, cl.Name) {
			continue // skipped after a failure with failurePolicy Stop
		}
		bs, err := standUp(ctx, s, cl, o, out, say)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for j := range s.Status.Cells {
			cell := &s.Status.Cells[j]
			if cell.Cluster != cl.Name || cell.Phase.Finished() {
				continue
			}
			if err := runCell(ctx, s, cell, *cl, o, out, say); err != nil {
				errs = append(errs, fmt.Errorf("cell %s: %w", cell.Name, err))
			}
			if ctx.Err() != nil {
				break
			}
		}
		if err := tearDown(cl, bs, say); err != nil {
			errs = append(errs, err)
		}
	}
	return errs, nil
}

// runClustersTogether starts every cluster the suite needs first, then runs
// the cells in crossClusterOrder, and stops every cluster it started at the
// end: after the last cell, after a failure, when ctx ends, or on a panic —
// no broker JVM outlives the suite. A cell failed with failurePolicy Stop
// has marked the rest skipped (suite.EndCell), so the loop runs no more.
func runClustersTogether(ctx context.Context, s *v1alpha1.BenchmarkSuite, o SuiteOptions, out *SuiteOutcome, say func(string, ...any)) (errs []error, abort error) {
	type standing struct {
		cl *v1alpha1.SuiteCluster
		bs *brokers
	}
	var up []standing
	defer func() {
		// Last started, first stopped: as a failed start leaves the ones
		// before it.
		for i := len(up) - 1; i >= 0; i-- {
			if err := tearDown(up[i].cl, up[i].bs, say); err != nil {
				errs = append(errs, err)
			}
		}
	}()
	byName := map[string]*v1alpha1.SuiteCluster{}
	for i := range s.Status.Clusters {
		cl := &s.Status.Clusters[i]
		byName[cl.Name] = cl
		if err := ctx.Err(); err != nil {
			return errs, err
		}
		if allFinished(s, cl.Name) {
			continue // skipped after a failure with failurePolicy Stop
		}
		bs, err := standUp(ctx, s, cl, o, out, say)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		up = append(up, standing{cl, bs})
	}
	for _, j := range crossClusterOrder(s.Status.Cells) {
		cell := &s.Status.Cells[j]
		if cell.Phase.Finished() {
			continue // its cluster failed, or skipped with failurePolicy Stop
		}
		if err := runCell(ctx, s, cell, *byName[cell.Cluster], o, out, say); err != nil {
			errs = append(errs, fmt.Errorf("cell %s: %w", cell.Name, err))
		}
		if err := ctx.Err(); err != nil {
			return errs, err
		}
	}
	return errs, nil
}

// standUp starts a managed cluster of the suite (nil brokers for an
// existing one, used as it is). When it cannot start, its cells fail
// (and with failurePolicy Stop every other cell is skipped).
func standUp(ctx context.Context, s *v1alpha1.BenchmarkSuite, cl *v1alpha1.SuiteCluster, o SuiteOptions, out *SuiteOutcome, say func(string, ...any)) (*brokers, error) {
	if !cl.Managed {
		return nil, nil
	}
	bs, err := startHost(ctx, s, cl, o.DataDir, say)
	if err != nil {
		cl.Phase, cl.Message = v1alpha1.ClusterFailed, err.Error()
		for j := range s.Status.Cells {
			if c := &s.Status.Cells[j]; c.Cluster == cl.Name && !c.Phase.Finished() {
				suite.EndCell(s, c, v1alpha1.CellFailed, fmt.Sprintf("cluster %s failed: %v", cl.Name, err))
			}
		}
		return nil, err
	}
	out.BrokerStarts[cl.System]++
	out.BrokerPids = append(out.BrokerPids, bs.Pids()...)
	cl.Phase, cl.Endpoints = v1alpha1.ClusterReady, &bs.endpoints
	return bs, nil
}

// tearDown stops a cluster standUp started; nothing for an existing one.
func tearDown(cl *v1alpha1.SuiteCluster, bs *brokers, say func(string, ...any)) error {
	if bs == nil {
		return nil
	}
	say("stopping cluster %s (pids %v)", cl.Name, bs.Pids())
	err := bs.stop()
	cl.Phase, cl.Endpoints = v1alpha1.ClusterTornDown, nil
	if err != nil {
		return fmt.Errorf("stopping cluster %s: %w", cl.Name, err)
	}
	return nil
}

func allFinished(s *v1alpha1.BenchmarkSuite, cluster string) bool {
	for _, c := range s.Status.Cells {
		if c.Cluster == cluster && !c.Phase.Finished() {
			return false
		}
	}
	return true
}

// startHost starts a managed cluster of the suite from its host run, with
// the broker settings its cells need.
func startHost(ctx context.Context, s *v1alpha1.BenchmarkSuite, cl *v1alpha1.SuiteCluster, dataDir string, say func(string, ...any)) (*brokers, error) {
	host, err := suite.HostRun(s, *cl)
	if err != nil {
		return nil, err
	}
	if err := admission.DefaultTyped(admission.BenchmarkRun(), host); err != nil {
		return nil, err
	}
	eff, err := durability.TranslateFor(host.Spec.System, localVersion(host), host.Spec.DurabilityOrDefault())
	if err != nil {
		return nil, err
	}
	if dataDir != "" {
		if dataDir, err = filepath.Abs(filepath.Join(dataDir, cl.Name)); err != nil {
			return nil, err
		}
	}
	started := time.Now()
	say("starting cluster %s: %s (broker settings %v)", cl.Name, brokerWhat(host), cl.BrokerSettings)
	bs, err := startBrokers(ctx, host, eff, dataDir, nil, say)
	if err != nil {
		return nil, err
	}
	say("cluster %s ready after %s", cl.Name, time.Since(started).Round(time.Second))
	return bs, nil
}

// runCell runs one cell as a local run in existing mode and records it.
func runCell(ctx context.Context, s *v1alpha1.BenchmarkSuite, cell *v1alpha1.SuiteCell, cl v1alpha1.SuiteCluster, o SuiteOptions, out *SuiteOutcome, say func(string, ...any)) error {
	run, err := suite.ChildRun(s, *cell, cl)
	if err == nil {
		err = admitRun(run)
	}
	if err != nil {
		suite.EndCell(s, cell, v1alpha1.CellFailed, err.Error())
		return err
	}
	cell.Phase = v1alpha1.CellRunning
	s.Status.CurrentCell = cell.Name
	say("cell %s (%s): %s, level %d, workload %s, against %s", cell.Name, s.Status.Progress, cell.System, cell.RequestedLevel, cell.Workload, cl.Name)
	res, runErr := Run(ctx, Options{Run: run, ResultsDir: out.Dir, SecretsFile: o.SecretsFile, PriceModelFile: o.PriceModelFile, Stdout: o.Stdout, Stderr: o.Stderr, SnapshotInterval: o.SnapshotInterval})
	if res != nil {
		cell.AchievedLevel = res.Durability.AchievedLevel
		if res.Summary != nil {
			out.Summaries[cell.Name] = res.Summary
			cell.Results = suite.CellResultsOf(&res.Summary.Results)
			if d := res.Summary.Durability; d != nil {
				cell.AchievedLevel = d.AchievedLevel
			}
		}
	}
	if runErr != nil {
		suite.EndCell(s, cell, v1alpha1.CellFailed, runErr.Error())
		return runErr
	}
	suite.EndCell(s, cell, v1alpha1.CellSucceeded, "")
	return nil
}

// WriteSuiteResults writes what the suite's results ConfigMap holds as
// files of dir: suite.json, tables.txt (the cells' summaries are in their
// own directories already).
func WriteSuiteResults(dir string, s *v1alpha1.BenchmarkSuite, summaries map[string]*results.Summary) error {
	cm, err := suite.BuildConfigMap(s, summaries)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, k := range []string{suite.KeySuite, suite.KeyTables} {
		if err := os.WriteFile(filepath.Join(dir, k), []byte(cm.Data[k]), 0o644); err != nil {
			return err
		}
	}
	return nil
}
