package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/coordinator"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/faults"
	"github.com/streambench/streambench-operator/internal/pagecache"
	"github.com/streambench/streambench-operator/internal/protocol"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/stats"
	"github.com/streambench/streambench-operator/internal/workload"
)

func init() { rootCmd.AddCommand(newCoordinatorCmd()) }

type coordinatorFlags struct {
	workers                          []string
	workersService                   string
	workerPort, count                int
	system                           string
	bootstrap, serviceURL, adminURL  string
	workloadFile, workloadJSON       string
	durabilityJSON, driverJSON       string
	securityJSON                     string
	brokerVersion                    string
	testbedJSON                      string
	runID, runName, namespace        string
	resultsConfigMap, ownerUID       string
	faultClock                       bool
	faultLeaders                     string
	outputDir                        string
	snapshotInterval, serviceTimeout time.Duration
	shutdownWorkers                  bool
	existingCluster                  bool
	readFailureSettings              bool
	dropPageCache                    bool
	pageCacheDropTimeout             time.Duration
	monitoring                       monitoringFlags
	deadline                         time.Duration
	maxMessages                      int64
	repeats                          int
}

func newCoordinatorCmd() *cobra.Command {
	var f coordinatorFlags
	cmd := &cobra.Command{
		Use:   "coordinator",
		Short: "Drive the workers through one benchmark run and write its results",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runCoordinator(ctx, f)
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&f.workers, "workers", nil, "worker URLs (http://host:port), comma-separated")
	fl.StringVar(&f.workersService, "workers-service", "", "headless Service of the workers (DNS name); with --count")
	fl.IntVar(&f.count, "count", 0, "number of workers behind --workers-service")
	fl.IntVar(&f.workerPort, "worker-port", 8080, "port of the workers behind --workers-service")
	fl.DurationVar(&f.serviceTimeout, "workers-timeout", 5*time.Minute, "how long to wait for --count workers to appear behind --workers-service")
	fl.StringVar(&f.system, "system", "", "system under test: kafka or pulsar")
	fl.StringVar(&f.bootstrap, "bootstrap", "", "Kafka bootstrap servers (host:port,...)")
	fl.StringVar(&f.serviceURL, "service-url", "", "Pulsar service URL (pulsar://host:6650)")
	fl.StringVar(&f.adminURL, "admin-url", "", "Pulsar admin URL (http://host:8080)")
	fl.StringVar(&f.workloadFile, "workload-file", "", "OMB workload YAML file")
	fl.StringVar(&f.workloadJSON, "workload-json", "", "workload as JSON (spec.workload)")
	fl.StringVar(&f.testbedJSON, "testbed-json", "", "the testbed the operator probed before the load (status.testbed as JSON), kept in summary.json")
	fl.StringVar(&f.durabilityJSON, "durability-json", "", `durability as JSON (spec.durability, e.g. {"level":2}; default level 2)`)
	fl.StringVar(&f.brokerVersion, "broker-version", "", "the brokers' version (status.durability.brokerVersion), so the results say whether the durability experiment verified the level on it")
	fl.StringVar(&f.driverJSON, "driver-json", "", "client setting overrides as JSON (spec.driver)")
	fl.StringVar(&f.securityJSON, "security-json", "", "how the clients reach a secured cluster, as JSON (driver.Security: TLS and authentication with the paths of the files that hold the secrets, never the secrets); the coordinator passes it to the workers")
	fl.StringVar(&f.runID, "run-id", "", "names the run's topics and subscriptions (default: derived from --run-name and the time)")
	fl.StringVar(&f.runName, "run-name", "local", "the BenchmarkRun's name, in the results")
	fl.StringVar(&f.namespace, "namespace", "", "namespace of the results ConfigMap (default: the pod's)")
	fl.StringVar(&f.resultsConfigMap, "results-configmap", "", "write the results into this ConfigMap (in a cluster)")
	fl.StringVar(&f.ownerUID, "owner-uid", "", "UID of the BenchmarkRun that owns the results ConfigMap")
	fl.BoolVar(&f.faultClock, "fault-clock", false, "record each repeat's measured-phase start in the results ConfigMap, for the operator's spec.faults")
	fl.StringVar(&f.faultLeaders, "fault-leaders", "", "index@at of the spec.faults on leader: at each one's time, name the broker that leads the first topic's partition 0 in the results ConfigMap")
	fl.StringVar(&f.outputDir, "output-dir", "", "write summary.json and omb-result.json into this directory")
	fl.BoolVar(&f.shutdownWorkers, "shutdown-workers", false, "ask the workers to exit at the end (worker pods of a Job)")
	fl.BoolVar(&f.existingCluster, "existing-cluster", false, "the brokers are an existing cluster: read their durability settings and report the level really in effect")
	fl.BoolVar(&f.readFailureSettings, "read-failure-settings", false, "the run has faults: read the brokers' settings that bound a failure's stall (session and replica timeouts, BookKeeper timeouts) to explain each fault's stall")
	fl.DurationVar(&f.snapshotInterval, "snapshot-interval", 10*time.Second, "length of a stats interval")
	fl.BoolVar(&f.dropPageCache, "drop-page-cache", false, "before draining a backlog, ask the operator (through --results-configmap) to drop the broker nodes' page cache, and wait for it (spec.testbed.dropPageCache)")
	fl.DurationVar(&f.deadline, "deadline", 0, "stop the run this long after the coordinator started, keeping its results so far (the controller passes the Jobs' deadline less the time the final write needs); 0: no limit")
	fl.Int64Var(&f.maxMessages, "max-messages", 0, "end the measured phase once the producers had this many messages acknowledged in it, or at the end of the workload's duration, whichever comes first (as kafka-producer-perf-test's --num-records bounds a run; the results' notes say which ended it); 0: the duration alone")
	fl.IntVar(&f.repeats, "repeats", 1, "run the load this many times on the same brokers and workers, fresh topics each (spec.repeats): the results are the median of each figure over the repeats, each repeat's own under repeat-<i>")
	fl.DurationVar(&f.pageCacheDropTimeout, "page-cache-drop-timeout", pagecache.DefaultTimeout, "how long to wait for the operator to answer a page-cache drop request")
	f.monitoring.register(fl)
	return cmd
}

func runCoordinator(ctx context.Context, f coordinatorFlags) error {
	sys := v1alpha1.System(f.system)
	if sys != v1alpha1.SystemKafka && sys != v1alpha1.SystemPulsar {
		return fmt.Errorf("--system %q: use kafka or pulsar", f.system)
	}
	if f.repeats < 1 {
		return fmt.Errorf("--repeats %d: give 1 (once) or more", f.repeats)
	}
	if f.maxMessages < 0 {
		return fmt.Errorf("--max-messages %d: give a count of messages, or 0 for none", f.maxMessages)
	}
	wl, err := loadWorkload(f)
	if err != nil {
		return err
	}
	var payload []byte
	if workload.ReadsPayloadFile(wl) {
		if payload, err = os.ReadFile(wl.PayloadFile); err != nil {
			return fmt.Errorf("spec.workload.payloadFile: %w", err)
		}
	}
	dspec := v1alpha1.DurabilitySpec{}
	if f.durabilityJSON != "" {
		if err := strictJSON(f.durabilityJSON, &dspec); err != nil {
			return fmt.Errorf("--durability-json: %w", err)
		}
	} else {
		l := v1alpha1.Level2
		dspec.Level = &l
	}
	// With the version, the results' durability says what status.durability
	// says (verified by the experiment, or as configured); an existing
	// cluster's is read from the brokers instead (readDurability).
	eff, err := durability.TranslateFor(sys, f.brokerVersion, dspec)
	if err != nil {
		return err
	}
	var testbed *v1alpha1.Testbed
	if f.testbedJSON != "" {
		testbed = &v1alpha1.Testbed{}
		if err := strictJSON(f.testbedJSON, testbed); err != nil {
			return fmt.Errorf("--testbed-json: %w", err)
		}
	}
	var overrides *v1alpha1.DriverSpec
	if f.driverJSON != "" {
		overrides = &v1alpha1.DriverSpec{}
		if err := strictJSON(f.driverJSON, overrides); err != nil {
			return fmt.Errorf("--driver-json: %w", err)
		}
	}
	sec, err := securityFlag(f.securityJSON)
	if err != nil {
		return err
	}
	workers, err := resolveWorkers(ctx, f)
	if err != nil {
		return err
	}
	var dropper coordinator.PageCacheDropper
	if f.dropPageCache {
		if dropper, err = configMapDropper(f); err != nil {
			return err
		}
	}
	var clock *faults.ClockWriter
	if f.faultClock {
		if clock, err = configMapClock(f); err != nil {
			return err
		}
	}
	leaders, err := faults.ParseLeaderFaults(f.faultLeaders)
	if err != nil {
		return err
	}
	if len(leaders) > 0 && clock == nil {
		return fmt.Errorf("--fault-leaders needs --fault-clock: the answers go where the operator reads the clock")
	}
	runID := f.runID
	if runID == "" {
		runID = fmt.Sprintf("%s-%d", f.runName, time.Now().Unix())
	}
	onSnapshot, stopMetrics, err := f.monitoring.serveMetrics(runID, wl)
	if err != nil {
		return err
	}
	defer stopMetrics()
	// The final write must happen also when ctx ends (SIGTERM from a pod
	// deletion, an eviction, the Job's deadline): it gets a context of its
	// own, bounded by finalWriteTimeout.
	writeCtx := context.WithoutCancel(ctx)
	runCtx := ctx
	if f.deadline > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeoutCause(ctx, f.deadline, fmt.Errorf("the run's deadline (%s) passed", f.deadline))
		defer cancel()
	}
	r := repeater{f: f, sys: sys, eff: eff, wl: wl, payload: payload, overrides: overrides, sec: sec,
		workers: workers, dropper: dropper, clock: clock, leaders: leaders, onSnapshot: onSnapshot, testbed: testbed, writeCtx: writeCtx}
	n := max(f.repeats, 1)
	var runErr error
	for i := 1; i <= n; i++ {
		id := runID
		if n > 1 {
			id = fmt.Sprintf("%s-r%d", runID, i)
			log.Printf("coordinator: repeat %d of %d (fresh topics %s*, the same brokers and workers)", i, n, id)
		}
		if runErr = r.runOne(ctx, runCtx, id, i == n); runErr != nil {
			// A repeat that failed ends the run: the repeats after it would
			// measure brokers in another state. Its results so far and the
			// repeats done are written below.
			break
		}
	}
	if runErr != nil && len(r.done) < n && f.shutdownWorkers {
		// The last repeat asks the workers to exit as it ends; a run that
		// ends before it asks here, so the worker Job completes.
		coordinator.ShutdownWorkers(writeCtx, workers, os.Getenv(protocol.TokenEnv))
	}
	if len(r.done) == 0 {
		return runErr
	}
	var errs []error
	if f.outputDir != "" {
		if err := writeRepeatFiles(f.outputDir, r.done); err != nil {
			errs = append(errs, fmt.Errorf("writing results to %s: %w", f.outputDir, err))
		}
	}
	if f.resultsConfigMap != "" {
		wctx, cancel := context.WithTimeout(writeCtx, finalWriteTimeout)
		t := time.Now()
		err := writeConfigMap(wctx, f, r.done)
		cancel()
		log.Printf("coordinator: final results write took %s", time.Since(t).Round(time.Millisecond))
		if err != nil {
			errs = append(errs, err)
		}
	}
	if runErr != nil {
		return runErr
	}
	if len(errs) > 0 {
		return fmt.Errorf("%v", errs)
	}
	return nil
}

// repeater runs the load once per repeat (spec.repeats) on the same
// brokers and workers, each with fresh topics, and keeps what each repeat
// measured (done), the one that failed included when it measured
// anything.
type repeater struct {
	f         coordinatorFlags
	sys       v1alpha1.System
	eff       v1alpha1.EffectiveDurability
	wl        v1alpha1.WorkloadSpec
	payload   []byte
	overrides *v1alpha1.DriverSpec
	sec       *driver.Security
	workers   []string
	dropper   coordinator.PageCacheDropper
	// clock records each repeat's measured-phase start for the
	// operator's fault schedule (nil outside a cluster).
	clock *faults.ClockWriter
	// leaders are the faults on leader the coordinator names a broker for
	// (--fault-leaders); runID is the repeat's, whose topics they ask of.
	leaders    []faults.LeaderFault
	runID      string
	onSnapshot func(stats.Snapshot)
	testbed    *v1alpha1.Testbed
	writeCtx   context.Context

	done []results.Input
}

// runOne runs one repeat under runID; last asks the workers to exit as it
// ends (--shutdown-workers). While it runs, its results so far are written
// every interval beside the repeats done, marked partial.
func (r *repeater) runOne(ctx, runCtx context.Context, runID string, last bool) error {
	f := r.f
	var cp *checkpointer
	if f.resultsConfigMap != "" {
		cp = &checkpointer{write: func(in results.Input) error {
			in.Partial = true
			in.Notes = append(in.Notes, fmt.Sprintf("partial results, written at %s while the run was in progress", time.Now().UTC().Format(time.RFC3339)))
			wctx, cancel := context.WithTimeout(r.writeCtx, finalWriteTimeout)
			defer cancel()
			return writeConfigMap(wctx, f, append(slices.Clone(r.done), in))
		}, input: func(res *coordinator.Result) results.Input { return res.ResultsInput(f.runName, f.namespace, &r.eff) }}
	}
	r.runID = runID
	started := time.Now()
	res, runErr := coordinator.Run(runCtx, coordinator.Options{
		Workers: r.workers,
		Driver: driver.Config{System: r.sys, Durability: r.eff, Overrides: r.overrides, RunID: runID, Brokers: v1alpha1.BrokerEndpoints{
			BootstrapServers: f.bootstrap, ServiceURL: f.serviceURL, AdminURL: f.adminURL,
		}, Security: r.sec},
		Workload: r.wl, PayloadData: r.payload, SnapshotInterval: f.snapshotInterval,
		ShutdownWorkers:     f.shutdownWorkers && last,
		MaxMessages:         f.maxMessages,
		ReadDurability:      f.existingCluster,
		ReadFailureSettings: f.readFailureSettings,
		PageCache:           r.dropper,
		OnSnapshot:          r.onSnapshot,
		Checkpoint:          cp.checkpoint,
		Token:               os.Getenv(protocol.TokenEnv),
		OnMeasure:           r.measureStarted,
	})
	if runErr == nil && context.Cause(runCtx) != nil {
		runErr = context.Cause(runCtx)
	}
	// No periodic write may land after the final one.
	cp.stop()
	log.Printf("coordinator: run and cleanup took %s", time.Since(started).Round(time.Millisecond))
	if res == nil || len(res.Snapshots) == 0 {
		return runErr
	}
	in := res.ResultsInput(f.runName, f.namespace, &r.eff)
	// Each repeat's page-cache drops, on its own copy of the testbed the
	// repeats share.
	testbed := r.testbed.DeepCopy()
	if len(res.PageCacheDrops) > 0 {
		if testbed == nil {
			testbed = &v1alpha1.Testbed{Note: "the testbed was not probed (no --testbed-json)"}
		}
		// The operator's drop before the load is in status.testbed already;
		// the mid-run ones are the coordinator's to add.
		testbed.PageCacheDrops = append(testbed.PageCacheDrops, res.PageCacheDrops...)
	}
	in.Testbed = testbed
	// The broker image and its Java, as the operator probed them.
	in.Brokers = results.ManagedBrokers(r.sys, testbed)
	var brNote string
	if in.BrokerResources, brNote = f.monitoring.brokerResources(ctx, r.sys, res); brNote != "" {
		in.Notes = append(in.Notes, brNote)
	}
	if runErr != nil {
		in.Partial = true
		in.Notes = append(in.Notes, "the run failed: "+runErr.Error())
	}
	if f.outputDir != "" {
		log.Printf("coordinator: %s", coordinator.DescribeConfigMap(in))
	}
	r.done = append(r.done, in)
	return runErr
}

// measureStarted tells the operator, through the results ConfigMap,
// when this repeat's measured phase started: spec.faults count from it.
// In the background, so the measured phase is not held up by the API
// server; a write that fails leaves the operator's faults uninjected,
// and the operator says so in status.faults.
func (r *repeater) measureStarted(start time.Time) {
	if r.clock == nil {
		return
	}
	repeat := len(r.done)
	r.nameLeaders(start, repeat)
	go func() {
		ctx, cancel := context.WithTimeout(r.writeCtx, finalWriteTimeout)
		defer cancel()
		if err := r.clock.Record(ctx, repeat, start); err != nil {
			log.Printf("coordinator: the measured phase's start was not recorded for the operator's faults: %v", err)
		}
	}()
}

// writeRepeatFiles writes a run's results into dir: a run's files, or for
// a repeated run each repeat's in its directory (results.RepeatDir) and
// their aggregate as dir's summary.json, as local mode lays them out.
func writeRepeatFiles(dir string, done []results.Input) error {
	if len(done) == 1 {
		_, err := coordinator.WriteFiles(dir, done[0])
		return err
	}
	var sums []*results.Summary
	var dirs []string
	for i, in := range done {
		sum, err := coordinator.WriteFiles(filepath.Join(dir, results.RepeatDir(i+1)), in)
		if err != nil {
			return err
		}
		sums, dirs = append(sums, sum), append(dirs, results.RepeatDir(i+1))
	}
	_, err := coordinator.WriteAggregate(dir, sums, dirs)
	return err
}

func loadWorkload(f coordinatorFlags) (v1alpha1.WorkloadSpec, error) {
	switch {
	case f.workloadFile != "" && f.workloadJSON != "":
		return v1alpha1.WorkloadSpec{}, fmt.Errorf("give --workload-file or --workload-json, not both")
	case f.workloadFile != "":
		return workload.LoadFile(f.workloadFile, field.NewPath("spec", "workload"))
	case f.workloadJSON != "":
		wl, err := workload.Parse([]byte(f.workloadJSON))
		if err != nil {
			return wl, fmt.Errorf("--workload-json: %w", err)
		}
		workload.Default(&wl)
		return wl, nil
	}
	return v1alpha1.WorkloadSpec{}, fmt.Errorf("no workload: give --workload-file or --workload-json")
}

// securityFlag reads --security-json; nil for none. The flag carries
// paths only (the operator mounts the Secret keys at them), so an unknown
// field is refused like --driver-json's: a setting the drivers would not
// apply must not be dropped silently.
func securityFlag(s string) (*driver.Security, error) {
	if s == "" {
		return nil, nil
	}
	sec := &driver.Security{}
	if err := strictJSON(s, sec); err != nil {
		return nil, fmt.Errorf("--security-json: %w", err)
	}
	return sec, nil
}

func strictJSON(s string, v any) error {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// resolveWorkers returns --workers, or waits (bounded) until --count
// addresses answer behind the headless --workers-service.
func resolveWorkers(ctx context.Context, f coordinatorFlags) ([]string, error) {
	if len(f.workers) > 0 {
		return f.workers, nil
	}
	if f.workersService == "" || f.count < 1 {
		return nil, fmt.Errorf("give --workers url,url or --workers-service <svc> with --count N")
	}
	deadline := time.Now().Add(f.serviceTimeout)
	var got []string
	for {
		addrs, err := net.DefaultResolver.LookupHost(ctx, f.workersService)
		if err == nil {
			got = addrs
			if len(addrs) >= f.count {
				sort.Strings(addrs)
				var urls []string
				for _, a := range addrs[:f.count] {
					urls = append(urls, "http://"+net.JoinHostPort(a, strconv.Itoa(f.workerPort)))
				}
				return urls, nil
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("--workers-service %s: %d of %d workers resolvable after %s (last error: %v); check the worker pods", f.workersService, len(got), f.count, f.serviceTimeout, err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}

// configMapDropper is the coordinator's side of the page-cache handshake:
// requests in the run's results ConfigMap, which the operator answers.
func configMapDropper(f coordinatorFlags) (*pagecache.Requester, error) {
	if f.resultsConfigMap == "" {
		return nil, fmt.Errorf("--drop-page-cache needs --results-configmap: the operator answers the coordinator's page-cache drop requests in the run's results ConfigMap")
	}
	ns, err := resultsNamespace(f.namespace)
	if err != nil {
		return nil, err
	}
	c, err := kubeClient()
	if err != nil {
		return nil, err
	}
	r := &pagecache.Requester{Client: c, Namespace: ns, Name: f.resultsConfigMap, Timeout: f.pageCacheDropTimeout,
		Labels: map[string]string{results.LabelRun: f.runName}}
	if f.ownerUID != "" {
		// As the results have it (results.BuildConfigMap), so the
		// ConfigMap the request creates goes with the run.
		r.Owner = []metav1.OwnerReference{results.OwnerRef{Name: f.runName, UID: f.ownerUID}.Reference()}
	}
	return r, nil
}

// configMapClock records the measured phases' starts in the run's
// results ConfigMap, where the operator's fault schedule reads them.
func configMapClock(f coordinatorFlags) (*faults.ClockWriter, error) {
	if f.resultsConfigMap == "" {
		return nil, fmt.Errorf("--fault-clock needs --results-configmap: the operator reads the measured phase's start from the run's results ConfigMap")
	}
	d, err := configMapDropper(f)
	if err != nil {
		return nil, err
	}
	return &faults.ClockWriter{Client: d.Client, Namespace: d.Namespace, Name: d.Name, Labels: d.Labels, Owner: d.Owner}, nil
}

// resultsNamespace is --namespace, or the pod's own.
func resultsNamespace(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
	if err != nil {
		return "", fmt.Errorf("--results-configmap needs --namespace outside a pod: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

func kubeClient() (client.Client, error) {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("--results-configmap: no cluster configuration: %w", err)
	}
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: scheme})
}

// writeConfigMap writes the results of the repeats in ins (one for a run
// not repeated) into the run's results ConfigMap.
func writeConfigMap(ctx context.Context, f coordinatorFlags, ins []results.Input) error {
	if len(ins) == 0 {
		return nil
	}
	ns, err := resultsNamespace(ins[0].Namespace)
	if err != nil {
		return err
	}
	ins = slices.Clone(ins)
	for i := range ins {
		ins[i].Namespace = ns
		if f.ownerUID != "" {
			ins[i].Owner = &results.OwnerRef{Name: f.runName, UID: f.ownerUID}
		}
	}
	cm, _, err := results.BuildRepeatedConfigMap(ins)
	if err != nil {
		return err
	}
	cm.Name = f.resultsConfigMap
	c, err := kubeClient()
	if err != nil {
		return err
	}
	return results.Write(ctx, c, cm)
}
