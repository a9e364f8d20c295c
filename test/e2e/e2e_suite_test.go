//go:build e2e

// Package e2e runs the operator as users install it (the Helm chart,
// charts/streambench, installed with the Helm SDK) in a
// real cluster — any cluster the KUBECONFIG points at: the local cluster of
// hack/local-cluster, or kind in CI — against real Kafka and Pulsar brokers
// started on the host.
//
// Run it with `make test-e2e` (or `make test-e2e-kind`). The build tag keeps
// it out of `go test ./...`; invoked without a reachable cluster, the suite
// fails and says how to get one.
//
// The make targets run it in parallel processes (`ginkgo --procs`,
// E2E_PROCS); `go test` runs it in one. Every process has a namespace of
// its own; a spec that owns the cluster (taints the node, installs
// cluster-wide objects, restarts the operator) is Serial and runs alone,
// after the others; whatever else two specs could touch at the same time
// (ports, local disks, the node's labels, the jar cache) is made theirs or
// locked, so no spec depends on the order of specs or on an idle machine.
//
// Environment:
//
//	KUBECONFIG       the cluster (required)
//	E2E_IMG          the streambench image, already in the cluster's
//	                 container runtime (default docker.io/streambench/streambench:e2e)
//	E2E_BROKER_HOST  the host address pods reach, where the brokers listen
//	                 (default 10.244.0.1, the local cluster's bridge gateway;
//	                 for kind, the Docker network's gateway)
//	E2E_KUBECTL      kubectl binary (default kubectl on PATH)
//	E2E_STRIMZI_INSTALL  Strimzi 1.2.0's install/cluster-operator directory,
//	                 for docs/on-a-cluster.md's recipe (readme_e2e_test.go), which
//	                 downloads it where the suite cannot (default
//	                 testdata/upstream/strimzi-1.2.0)
//	E2E_PULSAR_CHART the Apache Pulsar chart 4.7.0's directory, which the
//	                 suite serves as a chart repository for the operator
//	                 (default testdata/upstream/pulsar-chart-4.7.0)
//	E2E_STRIMZI_OPERATOR  the Strimzi install files of hack/images/strimzi.sh
//	                 (managed_kafka_test.go)
//	E2E_KEEP_OPERATOR  leave the Helm release installed after the suite
//
// A container that needs one of these set is labelled needs-<VAR>:
// internal/cicheck checks that the make targets which select it set it.
// A check a cluster cannot make (kind: its pods are not reachable from the
// runner) is reported by notChecked and counted at the suite's end.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

const operatorNamespace = "streambench-system"

var (
	k8s        client.Client
	kubeconfig string
	kubectlBin string
	image      string
	brokerHost string
	repoRoot   string
	testNS     string
	// pulsarChartRepo is the chart repository the suite serves the Pulsar
	// chart from ("" when it has none), which the operator installs from.
	pulsarChartRepo string
	// operatorInstalled: the suite installed the chart, so it removes it.
	operatorInstalled bool
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "streambench e2e")
}

// upstreamDir holds the upstream files the suite takes unchanged (the
// Pulsar chart, Strimzi's install files, the Prometheus Operator CRDs),
// pinned by its SHA256SUMS.
func upstreamDir() string { return filepath.Join(repoRoot, "testdata", "upstream") }

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// connect reads the suite's environment and makes its client; each
// parallel process does it for itself.
func connect() {
	kubeconfig = os.Getenv("KUBECONFIG")
	Expect(kubeconfig).NotTo(BeEmpty(), "KUBECONFIG is not set: the e2e suite needs a cluster. "+
		"Start one with `make local-cluster-up` (then `make test-e2e`) or run `make test-e2e-kind`")
	image = envOr("E2E_IMG", "docker.io/streambench/streambench:e2e")
	brokerHost = envOr("E2E_BROKER_HOST", "10.244.0.1")
	kubectlBin = envOr("E2E_KUBECTL", "kubectl")
	// The test binary runs in its package's folder (go test and ginkgo
	// both); runtime.Caller would not do: the build is -trimpath (Makefile).
	wd, err := os.Getwd()
	Expect(err).NotTo(HaveOccurred())
	repoRoot = filepath.Join(wd, "..", "..")

	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	Expect(err).NotTo(HaveOccurred(), "KUBECONFIG=%s cannot be read: is the cluster up? "+
		"Start one with `make local-cluster-up` or run `make test-e2e-kind`", kubeconfig)
	cfg.Timeout = 15 * time.Second
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
	v, err := dc.ServerVersion()
	Expect(err).NotTo(HaveOccurred(), "the cluster of KUBECONFIG=%s is not reachable: %v. "+
		"Start one with `make local-cluster-up` or run `make test-e2e-kind`", kubeconfig, err)
	GinkgoWriter.Printf("cluster %s (Kubernetes %s), image %s, brokers at %s, process %d of %d\n",
		cfg.Host, v.GitVersion, image, brokerHost, GinkgoParallelProcess(), suiteConfigProcs())
	cfg.Timeout = time.Minute

	scheme := k8sruntime.NewScheme()
	Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	Expect(v1alpha1.AddToScheme(scheme)).To(Succeed())
	k8s, err = client.New(cfg, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
}

func suiteConfigProcs() int {
	c, _ := GinkgoConfiguration()
	return c.ParallelTotal
}

// suiteSetup is what process 1 sets up once for every process (`ginkgo
// --procs N` runs the specs in N processes; `go test` in one): the
// operator, installed with the Helm SDK, and the chart repository it
// installs Pulsar from, served by process 1 until the suite ends.
type suiteSetup struct {
	PulsarChartRepo string `json:"pulsarChartRepo"`
}

var _ = SynchronizedBeforeSuite(func() []byte {
	connect()
	By("installing the operator with the Helm SDK from charts/streambench with image " + image)
	pulsarChartRepo = servePulsarChartRepo()
	installOperator()
	operatorInstalled = true
	kubectl(nil, "wait", "--for=condition=Established", "--timeout=60s", "crd/benchmarkruns.streambench.io")
	waitForManager()
	raw, err := json.Marshal(suiteSetup{PulsarChartRepo: pulsarChartRepo})
	Expect(err).NotTo(HaveOccurred())
	return raw
}, func(raw []byte) {
	if k8s == nil {
		connect()
	}
	var setup suiteSetup
	Expect(json.Unmarshal(raw, &setup)).To(Succeed())
	pulsarChartRepo = setup.PulsarChartRepo

	// Each process has a namespace of its own: specs that run at once
	// never see each other's runs, Jobs, Secrets or claims.
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "streambench-e2e-"}}
	Expect(k8s.Create(context.Background(), ns)).To(Succeed())
	testNS = ns.Name
	GinkgoWriter.Printf("test namespace %s\n", testNS)
	// The runs are a tenant's: a user with edit in testNS alone
	// (tenancy_test.go).
	bindTenant(context.Background(), testNS)
})

var _ = SynchronizedAfterSuite(func() {
	if k8s == nil {
		return
	}
	ctx := context.Background()
	if CurrentSpecReport().Failed() || os.Getenv("E2E_DUMP") != "" {
		dumpOperator()
	}
	if testNS != "" {
		By("deleting the test namespace " + testNS)
		// Suites and runs first, while the operator can still remove their
		// finalizers.
		_ = k8s.DeleteAllOf(ctx, &v1alpha1.BenchmarkSuite{}, client.InNamespace(testNS))
		_ = k8s.DeleteAllOf(ctx, &v1alpha1.BenchmarkRun{}, client.InNamespace(testNS))
		// 5 minutes: a run's teardown waits until its Jobs, brokers and
		// monitors are gone, which on a busy cold CI run (the managed
		// specs' brokers still running in the other processes) took
		// longer than 2 minutes for an existing-cluster run. What is left
		// is named with its phase and conditions, not dumped whole.
		Eventually(func(g Gomega) {
			var runs v1alpha1.BenchmarkRunList
			g.Expect(k8s.List(ctx, &runs, client.InNamespace(testNS))).To(Succeed())
			var left []string
			for _, r := range runs.Items {
				left = append(left, fmt.Sprintf("%s (phase %s, finalizers %v, conditions %v)", r.Name, r.Status.Phase, r.Finalizers, conditionSummary(r.Status.Conditions)))
			}
			g.Expect(left).To(BeEmpty(), "runs whose teardown has not ended; pods: %s", podSummary(testNS))
		}).WithTimeout(5 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		_ = k8s.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testNS}})
	}
}, func() {
	// Process 1, once every process has cleaned up after itself.
	unlabelStreamingNodes(context.Background())
	if operatorInstalled && os.Getenv("E2E_KEEP_OPERATOR") == "" {
		By("removing the operator (helm uninstall; the CRD stays, as Helm leaves it)")
		uninstallOperator()
	}
})

// conditionSummary is each condition's type, status and reason.
func conditionSummary(cs []metav1.Condition) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Type+"="+string(c.Status)+"/"+c.Reason)
	}
	return out
}

// kubectl runs kubectl against the suite's cluster and returns its stdout;
// a failure fails the spec with stderr.
func kubectl(stdin []byte, args ...string) string {
	out, err := kubectlE(stdin, args...)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return out
}

func kubectlE(stdin []byte, args ...string) (string, error) {
	cmd := exec.Command(kubectlBin, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("kubectl %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

func waitForManager() {
	By("waiting for the operator Deployment to be available")
	ctx := context.Background()
	Eventually(func(g Gomega) {
		var deps appsv1.DeploymentList
		g.Expect(k8s.List(ctx, &deps, client.InNamespace(operatorNamespace))).To(Succeed())
		g.Expect(deps.Items).To(HaveLen(1))
		d := deps.Items[0]
		g.Expect(d.Status.AvailableReplicas).To(BeNumerically(">=", 1), "manager pods: %s", podSummary(operatorNamespace))
	}).WithTimeout(3*time.Minute).WithPolling(2*time.Second).Should(Succeed(), func() string {
		dumpOperator()
		return "the operator did not become available"
	})
}

func podSummary(ns string) string {
	var pods corev1.PodList
	if err := k8s.List(context.Background(), &pods, client.InNamespace(ns)); err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, p := range pods.Items {
		fmt.Fprintf(&b, "%s %s", p.Name, p.Status.Phase)
		for _, cs := range p.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil {
				fmt.Fprintf(&b, " (%s: %s %s)", cs.Name, w.Reason, w.Message)
			}
			if t := cs.State.Terminated; t != nil {
				fmt.Fprintf(&b, " (%s: exit %d %s)", cs.Name, t.ExitCode, t.Reason)
			}
		}
		b.WriteString("; ")
	}
	return b.String()
}

func dumpOperator() {
	out, _ := kubectlE(nil, "-n", operatorNamespace, "logs", "--tail=80", "-l", "app.kubernetes.io/component=manager")
	GinkgoWriter.Printf("--- operator pods: %s\n--- operator log:\n%s\n", podSummary(operatorNamespace), out)
}
