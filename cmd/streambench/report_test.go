package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/apiservertest"
	"github.com/streambench/streambench-operator/internal/report"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/suite"
)

// recordedResults are results of real runs (see internal/report/testdata/gen).
var recordedResults = filepath.Join("..", "..", "internal", "report", "testdata")

// reportCLI runs the streambench command line with args and returns its output.
func reportCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	cmd := rootCmd
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	// Flags keep their values between Execute calls of one process.
	for _, sub := range cmd.Commands() {
		if sub.Name() == "compare" {
			_ = sub.Flags().Set("html", "compare.html")
		}
		if sub.Name() == "report" {
			_ = sub.Flags().Set("output", "")
		}
	}
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

func reportCopyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	for _, f := range []string{results.KeySummary, results.KeyOMB} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func TestReportAndCompareDirectories(t *testing.T) {
	dir := reportCopyDir(t, filepath.Join(recordedResults, "kafka-ack-all"))
	out, err := reportCLI(t, "report", dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(out); got != filepath.Join(dir, report.FileName) {
		t.Errorf("report printed %q, want the report's path", got)
	}
	if st, err := os.Stat(filepath.Join(dir, report.FileName)); err != nil || st.Size() < 10000 {
		t.Fatalf("report.html: %v", err)
	}

	html := filepath.Join(t.TempDir(), "cmp.html")
	out, err = reportCLI(t, "compare", filepath.Join(recordedResults, "pulsar-ack-1"), filepath.Join(recordedResults, "kafka-ack-1"), "--html", html)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Publish latency, ack − send (ms)", "Publish latency corrected for coordinated omission, ack − intended send (ms)", "End-to-end latency (ms)", "Throughput", "wrote " + html} {
		if !strings.Contains(out, want) {
			t.Errorf("compare output lacks %q:\n%s", want, out)
		}
	}
	if lines := strings.Split(out, "\n"); !strings.HasPrefix(lines[2], "pulsar-ack-1 ") || !strings.HasPrefix(lines[3], "kafka-ack-1 ") {
		t.Errorf("rows not in the order given:\n%s", out)
	}
	if _, err := os.Stat(html); err != nil {
		t.Errorf("compare wrote no HTML: %v", err)
	}

	// Two local runs both named alike are told apart by their paths.
	a, b := reportCopyDir(t, filepath.Join(recordedResults, "kafka-ack-1")), reportCopyDir(t, filepath.Join(recordedResults, "kafka-ack-1"))
	out, err = reportCLI(t, "compare", a, b, "--html", "")
	if err != nil {
		t.Fatalf("two runs of one name: %v", err)
	}
	if !strings.Contains(out, b+" ") {
		t.Errorf("second run not named by its path:\n%s", out)
	}

	if _, err := reportCLI(t, "report", filepath.Join(t.TempDir(), "missing")); err == nil || !strings.Contains(err.Error(), "no such results directory") {
		t.Errorf("missing directory: %v", err)
	}
}

// writeKubeconfig writes a kubeconfig for cfg whose context's namespace is ns.
func writeKubeconfig(t *testing.T, cfg *rest.Config, ns string) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["envtest"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "envtest", Namespace: ns}
	kc.CurrentContext = "envtest"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReportFromCluster reads a BenchmarkRun's results ConfigMap from a
// real kube-apiserver (envtest) with the CRDs installed.
func TestReportFromCluster(t *testing.T) {
	cfg := apiservertest.Start(t)
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const ns = "bench"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}

	// A run that succeeded: the sample, its status naming the ConfigMap
	// that holds the recordedResults results.
	raw, err := os.ReadFile(filepath.Join("..", "..", "config", "samples", "run-ack2-async.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var br v1alpha1.BenchmarkRun
	if err := yaml.Unmarshal(raw, &br); err != nil {
		t.Fatal(err)
	}
	br.Namespace = ns
	if err := c.Create(ctx, &br); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "stored-results", Namespace: ns}, Data: map[string]string{}, BinaryData: map[string][]byte{results.KeyHistograms: {0x1f, 0x8b}}}
	for _, k := range []string{results.KeySummary, results.KeyOMB} {
		b, err := os.ReadFile(filepath.Join(recordedResults, "kafka-ack-all", k))
		if err != nil {
			t.Fatal(err)
		}
		cm.Data[k] = string(b)
	}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	br.Status.Phase = v1alpha1.PhaseSucceeded
	br.Status.ResultsRef = cm.Name
	if err := c.Status().Update(ctx, &br); err != nil {
		t.Fatal(err)
	}
	// A run still running: no results yet.
	pending := br.DeepCopy()
	pending.ObjectMeta = metav1.ObjectMeta{Name: "still-running", Namespace: ns}
	pending.Status = v1alpha1.BenchmarkRunStatus{}
	if err := c.Create(ctx, pending); err != nil {
		t.Fatal(err)
	}
	kc := writeKubeconfig(t, cfg, ns)

	out := filepath.Join(t.TempDir(), "out")
	got, err := reportCLI(t, "report", br.Name, "--kubeconfig", kc, "-o", out)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(got) != filepath.Join(out, report.FileName) {
		t.Errorf("report printed %q", got)
	}
	for _, f := range []string{results.KeySummary, results.KeyOMB, results.KeyHistograms, report.FileName} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("cluster report did not write %s: %v", f, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(out, results.KeySummary)); string(b) != cm.Data[results.KeySummary] {
		t.Errorf("summary.json differs from the ConfigMap's")
	}

	// compare mixes a run of the cluster (namespace from -n) and a directory.
	got, err = reportCLI(t, "compare", br.Name, filepath.Join(recordedResults, "kafka-ack-1"), "-n", ns, "--kubeconfig", kc, "--html", "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "\n"+br.Name+" ") || !strings.Contains(got, "\nkafka-ack-1 ") {
		t.Errorf("compare of a cluster run and a directory:\n%s", got)
	}

	// A suite: its results ConfigMap, as the controller builds it, renders
	// as one page.
	lvl := v1alpha1.Level2
	bs := &v1alpha1.BenchmarkSuite{ObjectMeta: metav1.ObjectMeta{Name: "matrix", Namespace: ns}, Spec: v1alpha1.BenchmarkSuiteSpec{
		Systems: []v1alpha1.SuiteSystem{{System: v1alpha1.SystemKafka, Cluster: v1alpha1.ClusterSpec{Existing: &v1alpha1.ExistingCluster{BootstrapServers: "k:9092"}},
			Durabilities: []v1alpha1.DurabilitySpec{{Level: &lvl}}}},
		Workloads: []v1alpha1.SuiteWorkload{{Name: "lat", Spec: &v1alpha1.WorkloadSpec{MessageSize: 1024}}},
	}}
	if err := c.Create(ctx, bs); err != nil {
		t.Fatal(err)
	}
	sum, err := results.Read(cm)
	if err != nil {
		t.Fatal(err)
	}
	bs.Status.Cells = []v1alpha1.SuiteCell{{Name: "matrix-kafka-l2-lat", System: v1alpha1.SystemKafka, Workload: "lat", RequestedLevel: 2, Phase: v1alpha1.CellSucceeded}}
	scm, err := suite.BuildConfigMap(bs, map[string]*results.Summary{"matrix-kafka-l2-lat": sum})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, scm); err != nil {
		t.Fatal(err)
	}
	suiteOut := filepath.Join(t.TempDir(), "suite")
	got, err = reportCLI(t, "report", "matrix", "--kubeconfig", kc, "-o", suiteOut)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(got) != filepath.Join(suiteOut, report.SuiteReportFile) {
		t.Errorf("suite report printed %q", got)
	}
	if page, err := os.ReadFile(filepath.Join(suiteOut, report.SuiteReportFile)); err != nil || !strings.Contains(string(page), "lat at achieved durability level 2") {
		t.Errorf("suite page: %v", err)
	}
	// The directory it wrote renders again as a suite.
	if got, err = reportCLI(t, "report", suiteOut); err != nil || strings.TrimSpace(got) != filepath.Join(suiteOut, report.SuiteReportFile) {
		t.Errorf("suite directory: %q %v", got, err)
	}

	if _, err := reportCLI(t, "report", "still-running", "--kubeconfig", kc); err == nil || !strings.Contains(err.Error(), "has no results yet") {
		t.Errorf("run without results: %v", err)
	}
	if _, err := reportCLI(t, "report", "no-such-run", "--kubeconfig", kc, "-n", "default"); err == nil || !strings.Contains(err.Error(), "no BenchmarkRun no-such-run and no results ConfigMap no-such-run-results in namespace default") {
		t.Errorf("unknown run: %v", err)
	}
}
