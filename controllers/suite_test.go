package controllers

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/apiservertest"
	"github.com/streambench/streambench-operator/internal/provision/monitoring"
	"github.com/streambench/streambench-operator/internal/provision/pulsar"
)

// The suite runs on a real kube-apiserver and etcd (envtest), built from
// source by hack/envtest-binaries.sh, with the CRD from config/crd/bases:
// validation is exercised through the API server, not only in Go.

var (
	// cfg is the API server's admin, which the specs act as; operatorCfg
	// is the operator's own identity (operatorIdentity).
	cfg         *rest.Config
	operatorCfg *rest.Config
	k8sClient   client.Client
	testEnv     *envtest.Environment
	scheme      = runtime.NewScheme()
	ctx         context.Context
	cancel      context.CancelFunc

	// The operator under test; stopManager and startManager let a test
	// restart it mid-run.
	stopManager context.CancelFunc
	managerDone chan struct{}
	charts      *chartServer
)

func TestControllers(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(60 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	RunSpecs(t, "Controllers Suite")
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	ctx, cancel = context.WithCancel(context.Background())

	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))

	crds, err := apiservertest.CRDs()
	Expect(err).NotTo(HaveOccurred())
	testEnv, err = apiservertest.New(crds)
	Expect(err).NotTo(HaveOccurred(), "building kube-apiserver and etcd (hack/envtest-binaries.sh)")
	cfg, err = testEnv.Start()
	Expect(err).NotTo(HaveOccurred())

	k8sClient, err = client.New(cfg, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())

	operatorCfg = operatorIdentity()
	// The operator's own namespace, where it keeps what tenants must not
	// reach (docs/security.md).
	Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}})).To(Succeed())
	charts = newChartServer()
	go playTestbed(ctx)
	// A node the workers of every spec may go to (phase_pending_placement_test.go).
	clusterNode(defaultNode, nil, true)
	startManager()
})

var _ = AfterSuite(func() {
	defer func() {
		for _, d := range helmCacheDirs {
			_ = os.RemoveAll(d)
		}
	}()
	if stopManager != nil {
		stopManager()
		<-managerDone
	}
	cancel()
	if charts != nil {
		charts.Close()
	}
	if testEnv != nil {
		Expect(testEnv.Stop()).To(Succeed())
	}
})

// operatorUser is the user the manager and its Helm installer act as.
const operatorUser = "streambench-operator"

// operatorNamespace is the namespace the manager runs in, as the chart's
// release namespace.
const operatorNamespace = "streambench-system"

// operatorIdentity returns a client config of a user that holds only the
// operator's generated ClusterRole (config/rbac/role.yaml, which the chart
// copies), as the operator's ServiceAccount does in a cluster. envtest's
// API server enforces RBAC, so a verb the role lacks fails the spec that
// needs it, as it would fail a real run, where the admin's config would
// hide it.
func operatorIdentity() *rest.Config {
	raw, err := os.ReadFile(filepath.Join("..", "config", "rbac", "role.yaml"))
	Expect(err).NotTo(HaveOccurred())
	var role rbacv1.ClusterRole
	Expect(yaml.UnmarshalStrict(raw, &role)).To(Succeed())
	Expect(k8sClient.Create(ctx, &role)).To(Succeed())
	Expect(k8sClient.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: operatorUser},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: operatorUser}},
	})).To(Succeed())
	user, err := testEnv.AddUser(envtest.User{Name: operatorUser}, cfg)
	Expect(err).NotTo(HaveOccurred())
	return user.Config()
}

// startManager starts a new operator process-equivalent: its own manager,
// cache and Helm installer, with nothing carried over from the last one.
func startManager() {
	mgr, err := ctrl.NewManager(operatorCfg, ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{
			// A restarted manager registers the same controller name again.
			SkipNameValidation: ptr.To(true),
		},
	})
	Expect(err).NotTo(HaveOccurred())
	helm := pulsar.NewInstaller(operatorCfg, pulsar.InstallerOptions{
		Chart: pulsar.ChartSource{RepoURL: charts.URL, Name: "pulsar", Version: testChartVersion},
		// Not GinkgoT().TempDir(): a manager restarted in a DeferCleanup
		// may not register another.
		CacheDir:         helmCacheDir(),
		StorageNamespace: operatorNamespace,
	})
	Expect((&BenchmarkRunReconciler{
		Client:              mgr.GetClient(),
		APIReader:           mgr.GetAPIReader(),
		Scheme:              mgr.GetScheme(),
		Recorder:            mgr.GetEventRecorder("streambench"),
		WorkerImage:         testImage,
		AllowedWorkerImages: testAllowedImages,
		Helm:                helm,
		UnschedulableGrace:  0,
		Monitoring:          monitoring.Config{Release: testMonitoringRelease},
		OperatorNamespace:   operatorNamespace,
		DefaultArchive:      defaultArchive,
		ArchiveRetry:        100 * time.Millisecond,
	}).SetupWithManager(mgr)).To(Succeed())
	Expect((&BenchmarkSuiteReconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Scheme:    mgr.GetScheme(),
		Recorder:  mgr.GetEventRecorder("streambench"),
		Helm:      helm,
	}).SetupWithManager(mgr)).To(Succeed())

	mctx, mcancel := context.WithCancel(ctx)
	stopManager = mcancel
	managerDone = make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(managerDone)
		defer helm.Close()
		Expect(mgr.Start(mctx)).To(Succeed())
	}()
}

// defaultArchive is the next started manager's --archive-* flags (nil:
// none), as the chart's archive values set them.
var defaultArchive *v1alpha1.ArchiveSpec

// restartManager stops the operator and starts a fresh one.
func restartManager() {
	stopManager()
	<-managerDone
	startManager()
}

// helmCacheDir is a fresh directory for a manager's Helm cache, removed
// when the suite ends.
func helmCacheDir() string {
	dir, err := os.MkdirTemp("", "streambench-helm-cache-")
	Expect(err).NotTo(HaveOccurred())
	helmCacheDirs = append(helmCacheDirs, dir)
	return dir
}

var helmCacheDirs []string
