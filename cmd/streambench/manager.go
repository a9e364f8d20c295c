package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/controllers"
	"github.com/streambench/streambench-operator/internal/archive"
	"github.com/streambench/streambench-operator/internal/provision/monitoring"
	"github.com/streambench/streambench-operator/internal/provision/pulsar"
	"github.com/streambench/streambench-operator/internal/provision/workers"
	"github.com/streambench/streambench-operator/internal/version"
)

func init() { rootCmd.AddCommand(newManagerCmd()) }

func newManagerCmd() *cobra.Command {
	var (
		metricsAddr, probeAddr, workerImage string
		allowedWorkerImages                 []string
		leaderElect, workerNodeCheck        bool
		chart                               pulsar.ChartSource
		helmCache                           string
		unschedulableGrace                  time.Duration
		monitoringRelease                   string
		watchNamespaces                     []string
		operatorNamespace                   string
		defaultArchive                      v1alpha1.ArchiveSpec
		zapOpts                             = zap.Options{}
	)
	cmd := &cobra.Command{
		Use:   "manager",
		Short: "Run the BenchmarkRun operator",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
			if workerImage == "" {
				return fmt.Errorf("--worker-image is required: this build (%s) has no released image to default to; give e.g. --worker-image=%s:<version>", version.Get(), version.Repository)
			}
			allowed, err := workers.AllowedImages(allowedWorkerImages)
			if err != nil {
				return fmt.Errorf("--allowed-worker-images: %w", err)
			}
			if operatorNamespace == "" {
				return fmt.Errorf("--operator-namespace is required (or the POD_NAMESPACE environment variable): the namespace the manager runs in, where it keeps what tenants must not reach (Helm's release records, the privileged fault and page-cache Jobs); the chart sets it to its release namespace")
			}
			archiveDefault, err := defaultArchiveOf(defaultArchive)
			if err != nil {
				return err
			}
			ctrl.Log.Info("starting", "version", version.Get().Version, "commit", version.Get().Commit, "workerImage", workerImage, "allowedWorkerImages", allowed)
			scheme := runtime.NewScheme()
			utilruntime.Must(clientgoscheme.AddToScheme(scheme))
			utilruntime.Must(v1alpha1.AddToScheme(scheme))

			mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
				Scheme:                 scheme,
				Cache:                  cacheOptions(watchNamespaces, operatorNamespace),
				Metrics:                metricsserver.Options{BindAddress: metricsAddr},
				HealthProbeBindAddress: probeAddr,
				LeaderElection:         leaderElect,
				LeaderElectionID:       "streambench-operator.streambench.io",
			})
			if err != nil {
				return fmt.Errorf("creating the manager: %w", err)
			}
			helm := pulsar.NewInstaller(mgr.GetConfig(), pulsar.InstallerOptions{
				Chart:    chart,
				CacheDir: helmCache,
				Log:      func(format string, args ...any) { ctrl.Log.WithName("helm").V(1).Info(fmt.Sprintf(format, args...)) },
				// The release records out of the tenants' reach (#58).
				StorageNamespace: operatorNamespace,
			})
			defer helm.Close()
			if err := (&controllers.BenchmarkRunReconciler{
				Client:              mgr.GetClient(),
				APIReader:           mgr.GetAPIReader(),
				Scheme:              mgr.GetScheme(),
				Recorder:            mgr.GetEventRecorder("streambench"),
				WorkerImage:         workerImage,
				AllowedWorkerImages: allowed,
				Helm:                helm,
				UnschedulableGrace:  unschedulableGrace,
				SkipWorkerNodeCheck: !workerNodeCheck,
				Monitoring:          monitoring.Config{Release: monitoringRelease},
				OperatorNamespace:   operatorNamespace,
				DefaultArchive:      archiveDefault,
			}).SetupWithManager(mgr); err != nil {
				return fmt.Errorf("setting up the BenchmarkRun controller: %w", err)
			}
			// One Installer for both: a suite's Pulsar releases and runs'
			// share the Helm operations' bookkeeping.
			if err := (&controllers.BenchmarkSuiteReconciler{
				Client:    mgr.GetClient(),
				APIReader: mgr.GetAPIReader(),
				Scheme:    mgr.GetScheme(),
				Recorder:  mgr.GetEventRecorder("streambench"),
				Helm:      helm,
			}).SetupWithManager(mgr); err != nil {
				return fmt.Errorf("setting up the BenchmarkSuite controller: %w", err)
			}
			if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
				return err
			}
			if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
				return err
			}
			return mgr.Start(ctrl.SetupSignalHandler())
		},
	}
	f := cmd.Flags()
	f.StringVar(&metricsAddr, "metrics-bind-address", ":8080", "address the Prometheus metrics endpoint binds to; 0 disables it")
	f.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "address the health and readiness probes bind to")
	// The coordinator and workers speak the manager's protocol: by default
	// they run the released image of the manager's own version.
	defaultWorkerImage, _ := version.Get().Image()
	f.StringVar(&workerImage, "worker-image", defaultWorkerImage, "streambench image of the coordinator and worker Jobs; default: the released image of this version")
	// A run's spec.workers.image runs beside the Secrets the run mounts:
	// only the admin says which images may (issue 58).
	f.StringSliceVar(&allowedWorkerImages, "allowed-worker-images", nil, "images a run may name in spec.workers.image besides --worker-image, comma-separated: exact references, or prefixes ending in '*' (registry.example/streambench:* for every tag of one repository; '*' alone: any image); default: none, --worker-image only")
	f.StringVar(&chart.RepoURL, "pulsar-chart-repo", pulsar.DefaultRepoURL, "Helm repository of the Pulsar chart for managed Pulsar runs")
	f.StringVar(&chart.Name, "pulsar-chart", pulsar.DefaultChartName, "name of the Pulsar chart in --pulsar-chart-repo")
	f.StringVar(&chart.Version, "pulsar-chart-version", pulsar.DefaultChartVersion, "version of the Pulsar chart (pinned, so runs are reproducible)")
	f.StringVar(&helmCache, "helm-cache-dir", "", "writable directory for downloaded charts (default: a directory under the system temp dir)")
	f.StringVar(&monitoringRelease, "monitoring-release", monitoring.DefaultRelease, "value of the release label on the runs' PodMonitors: kube-prometheus-stack's Prometheus selects PodMonitors labelled with its Helm release name; empty: no label")
	f.DurationVar(&unschedulableGrace, "unschedulable-grace", 2*time.Minute, "how long a worker pod may stay unschedulable before its run fails")
	f.BoolVar(&workerNodeCheck, "worker-node-check", true, "fail a run at once, before its brokers are deployed, when no node can take its workers under spec.workers.placement; false for client node pools that scale from zero")
	f.StringSliceVar(&watchNamespaces, "watch-namespaces", nil, "namespaces whose BenchmarkRuns the manager reconciles, comma-separated (default: all); the chart's watchNamespaces, which grants Roles only there")
	f.StringVar(&operatorNamespace, "operator-namespace", os.Getenv("POD_NAMESPACE"), "namespace the manager runs in (default: $POD_NAMESPACE): Helm's release records and the privileged Jobs live there, out of the tenants' reach (docs/security.md)")
	f.StringVar(&defaultArchive.URL, "archive-url", "", "the default archive of runs without spec.results.archive: s3://bucket/prefix (docs/archive.md); empty: none")
	f.StringVar(&defaultArchive.Endpoint, "archive-endpoint", "", "the default archive's S3 API URL (empty: AWS's for --archive-region)")
	f.StringVar(&defaultArchive.Region, "archive-region", "", "the default archive's region (default us-east-1)")
	f.BoolVar(&defaultArchive.PathStyle, "archive-path-style", false, "address the default archive's bucket in the URL's path")
	f.StringVar(&defaultArchive.CredentialsSecret, "archive-credentials-secret", "", "a Secret in --operator-namespace with the default archive's accessKeyID and secretAccessKey (and sessionToken)")
	f.BoolVar(&leaderElect, "leader-elect", false, "elect a leader so that only one manager replica is active")
	// zap binds its flags (--zap-log-level, ...) to a standard FlagSet.
	zapFlags := flag.NewFlagSet("zap", flag.ContinueOnError)
	zapOpts.BindFlags(zapFlags)
	f.AddGoFlagSet(zapFlags)
	return cmd
}

// cacheOptions limits the manager's informers to the watched namespaces:
// with the chart's Roles only there, a cluster-wide list would be
// forbidden. Jobs and pods are cached in the operator's own namespace
// too, where the privileged signal and page-cache Jobs run
// (controllers/privileged_jobs.go), and nothing else is: the chart's Role
// there grants those two alone, and an informer it does not cover would
// never sync. Cluster-scoped objects (the run's Namespace, read for its
// Pod Security label) are still cached cluster-wide; the chart grants
// that one cluster-scoped resource.
func cacheOptions(namespaces []string, operatorNamespace string) cache.Options {
	if len(namespaces) == 0 {
		return cache.Options{}
	}
	byNS := func(extra string) map[string]cache.Config {
		out := make(map[string]cache.Config, len(namespaces)+1)
		for _, ns := range namespaces {
			out[ns] = cache.Config{}
		}
		if extra != "" {
			out[extra] = cache.Config{}
		}
		return out
	}
	return cache.Options{
		DefaultNamespaces: byNS(""),
		ByObject: map[client.Object]cache.ByObject{
			&batchv1.Job{}: {Namespaces: byNS(operatorNamespace)},
			&corev1.Pod{}:  {Namespaces: byNS(operatorNamespace)},
		},
	}
}

// defaultArchiveOf checks the --archive-* flags: nil without --archive-url.
func defaultArchiveOf(a v1alpha1.ArchiveSpec) (*v1alpha1.ArchiveSpec, error) {
	if a.URL == "" {
		if a.Endpoint != "" || a.CredentialsSecret != "" {
			return nil, fmt.Errorf("--archive-endpoint and --archive-credentials-secret need --archive-url, the bucket: s3://bucket/prefix")
		}
		return nil, nil
	}
	loc, err := archive.ParseLocation(a.URL)
	if err != nil {
		return nil, fmt.Errorf("--archive-url: %w", err)
	}
	if loc.Kind != archive.KindS3 {
		return nil, fmt.Errorf("--archive-url %s: the operator archives to an S3-compatible bucket, s3://bucket/prefix, not a directory of its own pod", a.URL)
	}
	return &a, nil
}
