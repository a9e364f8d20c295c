package pulsar

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/repo"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/apiservertest"
)

// The test chart stands in for the Apache Pulsar chart, whose repository
// is not reachable from here. It is named "pulsar" and uses the values the
// real chart uses for what the test checks: fullnameOverride,
// broker.replicaCount, broker.nodeSelector and broker.configData, the
// chart's app/release selector labels, and an init Job rendered only on
// install. Its templates set no namespace, as the real chart's resolve to
// the release namespace: the objects land wherever Helm's kube client
// puts them, which is what the namespace assertions check.
var testChart = map[string]string{
	"Chart.yaml": `apiVersion: v2
name: pulsar
version: 0.1.0
appVersion: "4.0.12"
`,
	"values.yaml": `fullnameOverride: ""
broker:
  replicaCount: 1
  configData: {}
`,
	"templates/broker-configmap.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Values.fullnameOverride }}-broker
  labels:
    app: pulsar
    release: {{ .Release.Name }}
data:
{{ toYaml .Values.broker.configData | indent 2 }}
`,
	"templates/broker-statefulset.yaml": `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: {{ .Values.fullnameOverride }}-broker
spec:
  serviceName: {{ .Values.fullnameOverride }}-broker
  replicas: {{ .Values.broker.replicaCount }}
  selector:
    matchLabels:
      app: pulsar
      release: {{ .Release.Name }}
      component: broker
  template:
    metadata:
      labels:
        app: pulsar
        release: {{ .Release.Name }}
        component: broker
    spec:
    {{- with .Values.broker.nodeSelector }}
      nodeSelector:
{{ toYaml . | indent 8 }}
    {{- end }}
      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 100
            podAffinityTerm:
              labelSelector:
                matchLabels: {component: broker}
              topologyKey: kubernetes.io/hostname
      containers:
      - name: broker
        image: apachepulsar/pulsar-all:{{ .Chart.AppVersion }}
`,
	"templates/pulsar-init-job.yaml": `{{- if .Release.IsInstall }}
apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Values.fullnameOverride }}-pulsar-init
spec:
  template:
    spec:
      restartPolicy: OnFailure
      containers:
      - name: init
        image: apachepulsar/pulsar-all:{{ .Chart.AppVersion }}
{{- end }}
`,
}

// chartRepo is a chart repository on loopback: index.yaml and the
// packaged test chart. The first index request waits until release is
// closed, so a test can observe an operation while it runs.
type chartRepo struct {
	*httptest.Server
	release  chan struct{}
	once     sync.Once
	archives atomic.Int32
}

func newChartRepo(t *testing.T) *chartRepo {
	t.Helper()
	src := t.TempDir()
	for name, body := range testChart {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ch, err := loader.LoadDir(src)
	if err != nil {
		t.Fatalf("loading the test chart: %v", err)
	}
	return newChartRepoOf(t, ch)
}

// newChartRepoOf serves ch from a chart repository on loopback.
func newChartRepoOf(t *testing.T, ch *chart.Chart) *chartRepo {
	t.Helper()
	dir := t.TempDir()
	if _, err := chartutil.Save(ch, dir); err != nil {
		t.Fatalf("packaging the test chart: %v", err)
	}
	// Relative URLs, as many repositories publish: the Installer must
	// resolve them against the repository URL.
	index, err := repo.IndexDirectory(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := index.WriteFile(filepath.Join(dir, "index.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}

	r := &chartRepo{release: make(chan struct{})}
	files := http.FileServer(http.Dir(dir))
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/index.yaml" {
			r.once.Do(func() { <-r.release })
		}
		if strings.HasSuffix(req.URL.Path, ".tgz") {
			r.archives.Add(1)
		}
		files.ServeHTTP(w, req)
	}))
	t.Cleanup(func() {
		r.unblock()
		r.Close()
	})
	return r
}

func (r *chartRepo) unblock() {
	select {
	case <-r.release:
	default:
		close(r.release)
	}
}

// operatorNS is the operator's namespace, where the Installer keeps the
// release records.
const operatorNS = "streambench-system"

func createNamespaces(t *testing.T, cs kubernetes.Interface, names ...string) {
	t.Helper()
	for _, ns := range names {
		if _, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// releaseRecords are the Secrets holding the records of release in
// namespace: in the operator's namespace, labelled with the release's; and
// it fails the test when Helm's default place, the release's namespace,
// holds any.
func releaseRecords(t *testing.T, cs kubernetes.Interface, namespace, release string) []corev1.Secret {
	t.Helper()
	sel := "owner=helm,name=" + release
	there, err := cs.CoreV1().Secrets(namespace).List(context.Background(), metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	if len(there.Items) != 0 {
		t.Errorf("%d records of release %s in its own namespace %s, where a tenant can write", len(there.Items), release, namespace)
	}
	ours, err := cs.CoreV1().Secrets(operatorNS).List(context.Background(), metav1.ListOptions{LabelSelector: sel + "," + LabelReleaseNamespace + "=" + namespace})
	if err != nil {
		t.Fatal(err)
	}
	return ours.Items
}

func startAPIServer(t *testing.T) *rest.Config {
	t.Helper()
	cfg, _ := apiservertest.StartWith(t)
	return cfg
}

// waitDone polls Result until the operation is done.
func waitDone(t *testing.T, inst *Installer, namespace, name string) Result {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		res, ok := inst.Result(namespace, name)
		if !ok {
			t.Fatalf("no result for %s/%s", namespace, name)
		}
		if res.Done {
			return res
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("operation on %s/%s not done after 2 minutes", namespace, name)
	return Result{}
}

func pvc(name string, lbls map[string]string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbls},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceStorage: resource.MustParse("1Gi"),
			}},
		},
	}
}

// gone is true when the object is not found or is being deleted (a PVC
// keeps its kubernetes.io/pvc-protection finalizer until a controller
// manager, absent in envtest, removes it).
func gone[T metav1.Object](obj T, err error) bool {
	if apierrors.IsNotFound(err) {
		return true
	}
	return err == nil && obj.GetDeletionTimestamp() != nil
}

// TestInstallerAgainstAPIServer installs the test chart from a loopback
// chart repository into a real API server (envtest) through the
// Installer, then uninstalls it. envtest runs no controllers, so no pod
// ever starts: the test checks what Helm creates and deletes, not a
// running Pulsar.
func TestInstallerAgainstAPIServer(t *testing.T) {
	cfg := startAPIServer(t)
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	createNamespaces(t, cs, "bench", "other", operatorNS)

	chartRepo := newChartRepo(t)
	inst := NewInstaller(cfg, InstallerOptions{
		Chart:            ChartSource{RepoURL: chartRepo.URL, Name: "pulsar", Version: "0.1.0"},
		CacheDir:         t.TempDir(),
		Log:              t.Logf,
		StorageNamespace: operatorNS,
	})
	t.Cleanup(inst.Close)

	run := newRun(func(r *v1alpha1.BenchmarkRun) {
		r.UID = "uid-of-run-a"
		m := r.Spec.Cluster.Managed
		m.Brokers = 2
		m.Placement = v1alpha1.Placement{
			NodeSelector: map[string]string{"node-pool": "pulsar"},
			Affinity:     placementAffinity(),
		}
	})
	rel, err := ReleaseFor(run, translate(t, run))
	if err != nil {
		t.Fatal(err)
	}
	if rel.Name != "run-a-pulsar" || rel.Namespace != "bench" {
		t.Fatalf("ReleaseFor = %s/%s, want bench/run-a-pulsar", rel.Namespace, rel.Name)
	}

	// Install runs in the background: the chart repository holds the
	// first index request, so the install cannot finish before the test
	// lets it, and StartInstall must have returned without it.
	if !inst.StartInstall(rel) {
		t.Fatal("StartInstall did not start")
	}
	res, ok := inst.Result("bench", rel.Name)
	if !ok || res.Done || res.Operation != OperationInstall {
		t.Fatalf("Result right after StartInstall = %+v, %v; want a running install", res, ok)
	}
	if inst.StartInstall(rel) || inst.StartUninstall("bench", rel.Name, true) {
		t.Fatal("a second operation started while the install runs")
	}
	chartRepo.unblock()
	if res := waitDone(t, inst, "bench", rel.Name); res.Err != nil {
		t.Fatalf("install: %v", res.Err)
	}

	// The release's objects are in the run's namespace, built from the
	// run's values, with the placement's affinity post-rendered.
	cm, err := cs.CoreV1().ConfigMaps("bench").Get(ctx, "run-a-pulsar-broker", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("broker ConfigMap: %v", err)
	}
	if got := cm.Data["managedLedgerDefaultAckQuorum"]; got != "2" {
		t.Errorf("ConfigMap managedLedgerDefaultAckQuorum = %q, want 2 (from the durability translation)", got)
	}
	sts, err := cs.AppsV1().StatefulSets("bench").Get(ctx, "run-a-pulsar-broker", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("broker StatefulSet: %v", err)
	}
	if *sts.Spec.Replicas != 2 {
		t.Errorf("StatefulSet replicas = %d, want 2 (spec.cluster.managed.brokers)", *sts.Spec.Replicas)
	}
	if got := sts.Spec.Template.Spec.NodeSelector["node-pool"]; got != "pulsar" {
		t.Errorf("StatefulSet nodeSelector = %v, want node-pool=pulsar", sts.Spec.Template.Spec.NodeSelector)
	}
	aff := sts.Spec.Template.Spec.Affinity
	if aff == nil || aff.NodeAffinity == nil || aff.PodAntiAffinity == nil ||
		len(aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 1 ||
		len(aff.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) != 1 {
		t.Errorf("StatefulSet affinity = %+v, want the placement's node affinity and required anti-affinity beside the chart's preferred term", aff)
	}
	if _, err := cs.BatchV1().Jobs("bench").Get(ctx, "run-a-pulsar-pulsar-init", metav1.GetOptions{}); err != nil {
		t.Errorf("init Job (rendered on install only): %v", err)
	}
	for _, ns := range []string{"default", "other"} {
		if l, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: "release=run-a-pulsar"}); err != nil || len(l.Items) != 0 {
			t.Errorf("release objects in namespace %s: %v, %v", ns, l, err)
		}
	}
	if st, err := inst.Status(ctx, "bench", rel.Name); err != nil || st != "deployed" {
		t.Errorf("Status = %q, %v; want deployed", st, err)
	}

	// Installing again (a restarted operator) leaves the release alone:
	// no upgrade, no second revision.
	if !inst.StartInstall(rel) {
		t.Fatal("second StartInstall did not start")
	}
	if res := waitDone(t, inst, "bench", rel.Name); res.Err != nil {
		t.Fatalf("second install: %v", res.Err)
	}
	if owner, exists, err := inst.Owner(ctx, "bench", rel.Name); err != nil || !exists || owner != rel.Owner {
		t.Errorf("Owner = %q, %v, %v; want the run's UID %q", owner, exists, err, rel.Owner)
	}
	// Another run of the same name (another UID) neither takes the
	// release over nor replaces it.
	other := rel
	other.Owner = "another-uid"
	if !inst.StartInstall(other) {
		t.Fatal("StartInstall for another owner did not start")
	}
	var notOwned *NotOwnedError
	if res := waitDone(t, inst, "bench", rel.Name); !errors.As(res.Err, &notOwned) || !strings.Contains(res.Err.Error(), "was installed by another run") {
		t.Fatalf("install for another owner: %v; want a NotOwnedError", res.Err)
	}
	secrets := releaseRecords(t, cs, "bench", "run-a-pulsar")
	if len(secrets) != 1 || secrets[0].Labels["version"] != "1" {
		t.Errorf("release revisions after a second install: %d secrets (want 1, revision 1)", len(secrets))
	}
	if n := chartRepo.archives.Load(); n != 1 {
		t.Errorf("chart archive downloaded %d times, want 1", n)
	}

	// The StatefulSet's claims (created here by hand: envtest has no
	// StatefulSet controller) carry its selector labels; a claim of
	// another release must stay.
	owned := pvc("run-a-pulsar-broker-data-run-a-pulsar-broker-0", map[string]string{"app": "pulsar", "release": "run-a-pulsar", "component": "broker"})
	foreign := pvc("run-b-pulsar-broker-data-run-b-pulsar-broker-0", map[string]string{"app": "pulsar", "release": "run-b-pulsar", "component": "broker"})
	for _, c := range []*corev1.PersistentVolumeClaim{owned, foreign} {
		if _, err := cs.CoreV1().PersistentVolumeClaims("bench").Create(ctx, c, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	if !inst.StartUninstall("bench", rel.Name, true) {
		t.Fatal("StartUninstall did not start")
	}
	res = waitDone(t, inst, "bench", rel.Name)
	if res.Err != nil || res.Operation != OperationUninstall {
		t.Fatalf("uninstall: %+v", res)
	}
	if obj, err := cs.CoreV1().ConfigMaps("bench").Get(ctx, "run-a-pulsar-broker", metav1.GetOptions{}); !gone(obj, err) {
		t.Errorf("ConfigMap after uninstall: %v", err)
	}
	if obj, err := cs.AppsV1().StatefulSets("bench").Get(ctx, "run-a-pulsar-broker", metav1.GetOptions{}); !gone[*appsv1.StatefulSet](obj, err) {
		t.Errorf("StatefulSet after uninstall: %v", err)
	}
	if obj, err := cs.BatchV1().Jobs("bench").Get(ctx, "run-a-pulsar-pulsar-init", metav1.GetOptions{}); !gone[*batchv1.Job](obj, err) {
		t.Errorf("Job after uninstall: %v", err)
	}
	if obj, err := cs.CoreV1().PersistentVolumeClaims("bench").Get(ctx, owned.Name, metav1.GetOptions{}); !gone(obj, err) {
		t.Errorf("the release's PVC survived the uninstall: %v", err)
	}
	if obj, err := cs.CoreV1().PersistentVolumeClaims("bench").Get(ctx, foreign.Name, metav1.GetOptions{}); err != nil || obj.DeletionTimestamp != nil {
		t.Errorf("another release's PVC was deleted: %v", err)
	}
	if st, err := inst.Status(ctx, "bench", rel.Name); err != nil || st != "" {
		t.Errorf("Status after uninstall = %q, %v; want none", st, err)
	}

	// Uninstalling a release that is gone succeeds: a restarted operator
	// may repeat it.
	if !inst.StartUninstall("bench", rel.Name, true) {
		t.Fatal("second StartUninstall did not start")
	}
	if res := waitDone(t, inst, "bench", rel.Name); res.Err != nil {
		t.Errorf("second uninstall: %v", res.Err)
	}
	inst.Forget("bench", rel.Name)
	if _, ok := inst.Result("bench", rel.Name); ok {
		t.Error("Result after Forget still reports the operation")
	}

	// A release whose install failed is not upgraded (that would skip the
	// init Job) but removed and installed afresh.
	runF := newRun(func(r *v1alpha1.BenchmarkRun) { r.Name = "run-f" })
	relF, err := ReleaseFor(runF, translate(t, runF))
	if err != nil {
		t.Fatal(err)
	}
	bad := relF
	bad.Values = map[string]any{"fullnameOverride": relF.Name, "broker": map[string]any{"replicaCount": -1}}
	if !inst.StartInstall(bad) {
		t.Fatal("StartInstall of the bad release did not start")
	}
	if res := waitDone(t, inst, "bench", relF.Name); res.Err == nil || !strings.Contains(res.Err.Error(), "replicas") {
		t.Fatalf("install with replicas -1: err = %v, want the API server's rejection", res.Err)
	}
	if st, err := inst.Status(ctx, "bench", relF.Name); err != nil || st != "failed" {
		t.Fatalf("Status after the failed install = %q, %v; want failed", st, err)
	}
	if !inst.StartInstall(relF) {
		t.Fatal("StartInstall after the failure did not start")
	}
	if res := waitDone(t, inst, "bench", relF.Name); res.Err != nil {
		t.Fatalf("install after the failure: %v", res.Err)
	}
	if st, err := inst.Status(ctx, "bench", relF.Name); err != nil || st != "deployed" {
		t.Errorf("Status = %q, %v; want deployed", st, err)
	}
	if _, err := cs.BatchV1().Jobs("bench").Get(ctx, "run-f-pulsar-pulsar-init", metav1.GetOptions{}); err != nil {
		t.Errorf("init Job after the fresh install: %v", err)
	}
	secrets = releaseRecords(t, cs, "bench", "run-f-pulsar")
	if len(secrets) != 1 || secrets[0].Labels["version"] != "1" || secrets[0].Labels["status"] != "deployed" {
		t.Errorf("release revisions after the fresh install: %d secrets, want one deployed revision 1", len(secrets))
	}
}

// TestInstallerUninstallsOnlyRecordsItKeeps: the uninstall reads no
// record from the run's namespace (where a tenant, or an operator before
// issue #58, may have left one), and refuses a record of its own store
// whose manifest lists an object in another namespace; either way the
// object the record names stays.
func TestInstallerUninstallsOnlyRecordsItKeeps(t *testing.T) {
	cfg := startAPIServer(t)
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	createNamespaces(t, cs, "bench", "other", operatorNS)
	victim, err := cs.CoreV1().ConfigMaps("other").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "victim"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	chartRepo := newChartRepo(t)
	chartRepo.unblock()
	inst := NewInstaller(cfg, InstallerOptions{
		Chart:            ChartSource{RepoURL: chartRepo.URL, Name: "pulsar", Version: "0.1.0"},
		CacheDir:         t.TempDir(),
		Log:              t.Logf,
		StorageNamespace: operatorNS,
	})
	t.Cleanup(inst.Close)
	forged := func(name string) *release.Release {
		return &release.Release{
			Name: name, Namespace: "bench", Version: 1,
			Info:     &release.Info{Status: release.StatusDeployed},
			Chart:    &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "pulsar", Version: "0.1.0"}},
			Manifest: "---\n# Source: pulsar/templates/x.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: victim\n  namespace: other\n",
			Hooks: []*release.Hook{{Name: "planted", Kind: "ConfigMap", Path: "pulsar/templates/h.yaml", Events: []release.HookEvent{release.HookPreDelete},
				Manifest: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: planted\n  namespace: other\n"}},
			Labels: map[string]string{LabelOwner: "uid-of-run-a"},
		}
	}
	victimStays := func(when string) {
		t.Helper()
		got, err := cs.CoreV1().ConfigMaps("other").Get(ctx, "victim", metav1.GetOptions{})
		if err != nil || got.UID != victim.UID || got.DeletionTimestamp != nil {
			t.Errorf("%s: the ConfigMap the record names: %v, %v; want it untouched", when, got, err)
		}
		if _, err := cs.CoreV1().ConfigMaps("other").Get(ctx, "planted", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s: the record's pre-delete hook ran: %v", when, err)
		}
	}

	// A record where Helm keeps it by default, the run's namespace.
	old := storage.Init(driver.NewSecrets(cs.CoreV1().Secrets("bench")))
	if err := old.Create(forged("run-a-pulsar")); err != nil {
		t.Fatal(err)
	}
	if owner, exists, err := inst.Owner(ctx, "bench", "run-a-pulsar"); err != nil || exists {
		t.Errorf("Owner of a release recorded in the run's namespace only = %q, %v, %v; want none", owner, exists, err)
	}
	if !inst.StartUninstall("bench", "run-a-pulsar", true) {
		t.Fatal("StartUninstall did not start")
	}
	if res := waitDone(t, inst, "bench", "run-a-pulsar"); res.Err != nil {
		t.Errorf("uninstall of a release the store does not hold: %v; want nothing done", res.Err)
	}
	victimStays("a record in the run's namespace")
	if _, err := old.Last("run-a-pulsar"); err != nil {
		t.Errorf("the record in the run's namespace: %v; want it left to its namespace's owner", err)
	}

	// A record in the operator's namespace that lists an object of another
	// namespace: the operator never renders one (ScopeRenderer), so it was
	// written by hand.
	store := storage.Init(newReleaseStore(cs.CoreV1().Secrets(operatorNS), "bench", t.Logf))
	if err := store.Create(forged("run-b-pulsar")); err != nil {
		t.Fatal(err)
	}
	if !inst.StartUninstall("bench", "run-b-pulsar", true) {
		t.Fatal("StartUninstall did not start")
	}
	res := waitDone(t, inst, "bench", "run-b-pulsar")
	for _, want := range []string{
		"refusing to uninstall: the release record " + RecordName("bench", "run-b-pulsar", 1) + " in namespace " + operatorNS,
		"ConfigMap other/victim names namespace other, not the run's (bench)",
		"inspect the Secret and delete it and the objects by hand",
	} {
		if res.Err == nil || !strings.Contains(res.Err.Error(), want) {
			t.Errorf("uninstall of a record naming another namespace: %v; want %q", res.Err, want)
		}
	}
	victimStays("a record in the operator's namespace naming another")
	if st, err := inst.Status(ctx, "bench", "run-b-pulsar"); err != nil || st != "deployed" {
		t.Errorf("Status of the refused record = %q, %v; want it kept, deployed", st, err)
	}
}

// TestInstallerUnknownChartVersion: a chart version the repository does
// not have fails the install with the fix in the message, before any
// object is created.
func TestInstallerUnknownChartVersion(t *testing.T) {
	chartRepo := newChartRepo(t)
	chartRepo.unblock()
	inst := NewInstaller(&rest.Config{Host: "http://127.0.0.1:1"}, InstallerOptions{
		Chart:    ChartSource{RepoURL: chartRepo.URL, Name: "pulsar", Version: "9.9.9"},
		CacheDir: t.TempDir(),
	})
	t.Cleanup(inst.Close)
	c, err := inst.chart.load()
	if err == nil {
		t.Fatalf("loaded %s, want an error", c.Metadata.Version)
	}
	for _, want := range []string{`chart pulsar 9.9.9 from ` + chartRepo.URL, "not in the repository's index", "set an existing chart name and version"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

// upstreamDir holds the upstream files the tests take unchanged
// (testdata/upstream, pinned by its SHA256SUMS); upstreamChart is the
// Apache Pulsar chart 4.7.0 as published.
var (
	upstreamDir   = filepath.Join("..", "..", "..", "testdata", "upstream")
	upstreamChart = filepath.Join(upstreamDir, "pulsar-chart-4.7.0")
)

// TestUpstreamChartUnderOperatorRole installs the real chart, through the
// Installer, as a user that holds only the operator's own ClusterRole
// (config/rbac/role.yaml, what charts/streambench installs) on a real API
// server with RBAC, then tears it down with its claims. envtest's admin
// would hide what a real cluster refuses: a Role granting more than the
// operator holds (the API server's escalation check), or a verb the
// teardown needs and the role lacks. No pod starts; what Helm creates and
// deletes under that role is what is checked.
func TestUpstreamChartUnderOperatorRole(t *testing.T) {
	ch, err := loader.LoadDir(upstreamChart)
	if err != nil {
		t.Fatalf("loading the upstream chart (testdata/upstream): %v", err)
	}
	// The chart renders PodMonitors: their CRD, as kube-prometheus-stack
	// installs it.
	admin, env := apiservertest.StartWith(t, filepath.Join(upstreamDir, "prometheus-operator-v0.93.0"))
	cs := kubernetes.NewForConfigOrDie(admin)
	ctx := context.Background()
	createNamespaces(t, cs, "bench", operatorNS)
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(b, &role); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, &role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const user = "streambench-operator"
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	operator, err := env.AddUser(envtest.User{Name: user}, admin)
	if err != nil {
		t.Fatal(err)
	}

	repo := newChartRepoOf(t, ch)
	repo.unblock()
	inst := NewInstaller(operator.Config(), InstallerOptions{
		Chart:            ChartSource{RepoURL: repo.URL, Name: DefaultChartName, Version: DefaultChartVersion},
		CacheDir:         t.TempDir(),
		Log:              t.Logf,
		StorageNamespace: operatorNS,
	})
	t.Cleanup(inst.Close)
	run := newRun(func(r *v1alpha1.BenchmarkRun) { r.UID = "uid-of-run-a" })
	rel, err := ReleaseFor(run, translate(t, run))
	if err != nil {
		t.Fatal(err)
	}
	// As the controller does where the PodMonitor CRD is served, with the
	// label kube-prometheus-stack's Prometheus selects by default.
	EnablePodMonitors(&rel, map[string]string{"release": "kube-prometheus-stack"})
	if !inst.StartInstall(rel) {
		t.Fatal("StartInstall did not start")
	}
	if res := waitDone(t, inst, "bench", rel.Name); res.Err != nil {
		t.Fatalf("installing the upstream chart under the operator's role: %v", res.Err)
	}
	for _, name := range []string{rel.Name + "-broker", rel.Name + "-bookie"} {
		if _, err := cs.AppsV1().StatefulSets("bench").Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("StatefulSet %s: %v", name, err)
		}
	}
	if recs := releaseRecords(t, cs, "bench", rel.Name); len(recs) != 1 {
		t.Errorf("%d records of the release in %s, want 1", len(recs), operatorNS)
	}
	if roles, err := cs.RbacV1().Roles("bench").List(ctx, metav1.ListOptions{}); err != nil || len(roles.Items) != 0 {
		t.Errorf("Roles in the run's namespace: %v, %v; want none (the broker's is left out)", roles, err)
	}
	// One PodMonitor per deployed component, each selectable by the
	// Prometheus of kube-prometheus-stack (the chart alone labels them
	// release: <Pulsar release>).
	monitors, err := dynamic.NewForConfigOrDie(admin).Resource(schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "podmonitors"}).
		Namespace("bench").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range monitors.Items {
		names = append(names, m.GetName())
		if got := m.GetLabels()["release"]; got != "kube-prometheus-stack" {
			t.Errorf("PodMonitor %s: release label %q, want kube-prometheus-stack", m.GetName(), got)
		}
	}
	slices.Sort(names)
	if want := []string{rel.Name + "-autorecovery", rel.Name + "-bookkeeper", rel.Name + "-broker", rel.Name + "-zookeeper"}; !slices.Equal(names, want) {
		t.Errorf("PodMonitors %v, want %v (none for the proxy, which is off)", names, want)
	}

	// A secured release (TLS and token authentication): the operator
	// writes its Secrets, under its own role, and the chart installs
	// without cert-manager (the post-render leaves its Certificate out;
	// envtest serves no cert-manager kinds, so one left in would fail the
	// install).
	secured := newRun(func(r *v1alpha1.BenchmarkRun) {
		r.Name, r.UID = "run-s", "uid-of-run-s"
		r.Spec.Cluster.Managed.Security = &v1alpha1.ManagedSecurity{TLS: true, Authentication: v1alpha1.ManagedAuthToken}
	})
	secrets, err := Secrets(secured, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ops := kubernetes.NewForConfigOrDie(operator.Config())
	for _, s := range secrets {
		if _, err := ops.CoreV1().Secrets("bench").Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating Secret %s under the operator's role: %v", s.Name, err)
		}
	}
	relS, err := ReleaseFor(secured, translate(t, secured))
	if err != nil {
		t.Fatal(err)
	}
	if !inst.StartInstall(relS) {
		t.Fatal("StartInstall of the secured release did not start")
	}
	if res := waitDone(t, inst, "bench", relS.Name); res.Err != nil {
		t.Fatalf("installing the secured chart under the operator's role: %v", res.Err)
	}
	sts, err := cs.AppsV1().StatefulSets("bench").Get(ctx, relS.Name+"-broker", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var vols []string
	for _, v := range sts.Spec.Template.Spec.Volumes {
		if v.Secret != nil {
			vols = append(vols, v.Secret.SecretName)
		}
	}
	slices.Sort(vols)
	if want := []string{"run-s-pulsar-ca-tls", "run-s-pulsar-tls-broker", "run-s-pulsar-token-broker-admin", "run-s-pulsar-token-symmetric-key"}; !slices.Equal(vols, want) {
		t.Errorf("the secured broker mounts Secrets %v, want %v", vols, want)
	}
	if !inst.StartUninstall("bench", relS.Name, true) {
		t.Fatal("StartUninstall of the secured release did not start")
	}
	if res := waitDone(t, inst, "bench", relS.Name); res.Err != nil {
		t.Fatalf("tearing the secured release down: %v", res.Err)
	}
	for _, s := range secrets {
		if err := ops.CoreV1().Secrets("bench").Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting Secret %s under the operator's role: %v", s.Name, err)
		}
	}

	claim := pvc(rel.Name+"-broker-data-"+rel.Name+"-broker-0", map[string]string{"app": DefaultChartName, "release": rel.Name, "component": "broker"})
	if _, err := cs.CoreV1().PersistentVolumeClaims("bench").Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if !inst.StartUninstall("bench", rel.Name, true) {
		t.Fatal("StartUninstall did not start")
	}
	if res := waitDone(t, inst, "bench", rel.Name); res.Err != nil {
		t.Fatalf("tearing down under the operator's role: %v", res.Err)
	}
	if obj, err := cs.CoreV1().PersistentVolumeClaims("bench").Get(ctx, claim.Name, metav1.GetOptions{}); !gone(obj, err) {
		t.Errorf("the release's claim survived the teardown: %v", err)
	}
	if obj, err := cs.AppsV1().StatefulSets("bench").Get(ctx, rel.Name+"-broker", metav1.GetOptions{}); !gone[*appsv1.StatefulSet](obj, err) {
		t.Errorf("broker StatefulSet after the teardown: %v", err)
	}
}
