//go:build e2e

package e2e

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/release"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/localbrokers"
)

// docs/on-a-cluster.md's "From zero to a result" (README's "On a cluster"
// until issue 63), command by command (readmeCommands, which
// readme_test.go keeps equal to that section). Most commands run as written,
// in bash, in a directory holding the repository's samples, with kubectl
// and streambench on PATH. What differs, and why:
//
//   - the Strimzi download: the suite's machines have no internet; the
//     release's install files come from E2E_STRIMZI_INSTALL (a directory with
//     install/cluster-operator's YAML files of Strimzi 1.2.0; by default the
//     repository's testdata/upstream/strimzi-1.2.0), packed as the
//     tarball the next command unpacks. Strimzi's operator image cannot be
//     pulled either: its Deployment is created, its CRDs must be Established,
//     and the managed sample must get its Kafka object — not brokers.
//   - helm install: done by the suite's BeforeSuite with the Helm SDK (with
//     E2E_IMG as the image); here the release is checked.
//   - <nvme-node> and <client-node>: the test cluster's first node that
//     takes pods (schedulableNodes). Its taint
//     is removed once checked, or nothing else would schedule on it.
//   - run-existing-kafka.yaml: bootstrapServers is the suite's brokers and
//     the workload is made short and light, as in the other specs.
//
// It owns the cluster (Serial: after the parallel specs, alone): it taints
// and labels the node, installs Strimzi 1.2.0's cluster-wide CRDs and
// removes README's StorageClass when it ends.
var _ = Describe("README: On a cluster", Label("needs-E2E_STRIMZI_INSTALL"), Serial, Ordered, func() {
	var (
		work, binDir, node string
		kafka              *localbrokers.Kafka
	)

	BeforeAll(func(ctx SpecContext) {
		strimziDir := envOr("E2E_STRIMZI_INSTALL", filepath.Join(upstreamDir(), "strimzi-1.2.0"))
		var err error
		work, err = os.MkdirTemp("", "streambench-readme-")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(os.RemoveAll, work)
		Expect(packStrimzi(strimziDir, filepath.Join(work, "strimzi-1.2.0.tar.gz"))).To(Succeed())
		// What an earlier, aborted run left would make `kubectl create` fail
		// (AlreadyExists): the README starts from a cluster without them.
		// --wait: the managed Kafka spec's Strimzi may have just
		// removed objects of the same names, CRDs still terminating refuse
		// a create.
		_, _ = kubectlE(nil, "delete", "-f", strimziDir, "--ignore-not-found", "--wait=true", "--timeout=3m")
		_, _ = kubectlE(nil, "delete", "namespace", "kafka", "--ignore-not-found", "--timeout=3m")
		for _, f := range []string{"samples/run-ack2-async.yaml", "samples/run-existing-kafka.yaml", "nodepool/storageclass-local-nvme.yaml", "nodepool/local-nvme-pv.yaml"} {
			raw, err := os.ReadFile(filepath.Join(repoRoot, "config", f))
			Expect(err).NotTo(HaveOccurred())
			Expect(os.MkdirAll(filepath.Dir(filepath.Join(work, "config", f)), 0o755)).To(Succeed())
			Expect(os.WriteFile(filepath.Join(work, "config", f), raw, 0o644)).To(Succeed())
		}

		By("building streambench and putting it and kubectl on PATH")
		binDir = filepath.Join(work, "bin")
		Expect(os.MkdirAll(binDir, 0o755)).To(Succeed())
		kubectlPath, err := exec.LookPath(kubectlBin)
		Expect(err).NotTo(HaveOccurred())
		kubectlPath, err = filepath.Abs(kubectlPath)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.Symlink(kubectlPath, filepath.Join(binDir, "kubectl"))).To(Succeed())
		build := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(binDir, "streambench"), "./cmd/streambench")
		build.Dir, build.Env = repoRoot, append(os.Environ(), "CGO_ENABLED=0")
		out, err := build.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "go build: %s", out)

		// A node that takes pods (kind's control plane does not).
		node = schedulableNodes(ctx)[0].Name

		By("starting 3 Kafka brokers on the host for the existing-cluster sample")
		kafka, err = localbrokers.StartKafka(ctx, localbrokers.KafkaOptions{Host: brokerHost, Log: logf})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(kafka.Stop()).To(Succeed()) })

		DeferCleanup(func(ctx SpecContext) {
			By("removing what the README's commands made")
			_ = k8s.DeleteAllOf(ctx, &v1alpha1.BenchmarkRun{}, client.InNamespace("kafka"))
			Eventually(func(g Gomega) {
				var runs v1alpha1.BenchmarkRunList
				g.Expect(k8s.List(ctx, &runs, client.InNamespace("kafka"))).To(Succeed())
				g.Expect(runs.Items).To(BeEmpty())
			}).WithTimeout(2 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
			for _, args := range [][]string{
				{"delete", "namespace", "kafka", "--ignore-not-found", "--wait=false"},
				{"delete", "-f", filepath.Join(work, "strimzi-1.2.0", "install", "cluster-operator"), "--ignore-not-found", "--wait=true", "--timeout=3m"},
				{"delete", "pv", "local-nvme-" + node + "-nvme0", "--ignore-not-found"},
				{"delete", "storageclass", "local-nvme", "--ignore-not-found"},
				{"taint", "nodes", node, "dedicated-"},
				{"label", "nodes", node, "node-pool-"},
			} {
				if out, err := kubectlE(nil, args...); err != nil {
					logf("cleanup: %v %s", err, out)
				}
			}
		}, NodeTimeout(4*time.Minute))
	}, NodeTimeout(10*time.Minute))

	// sh runs one README command as written (placeholders filled) in the
	// work directory.
	sh := func(ctx context.Context, command string) string {
		cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", fill(command, node))
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		ExpectWithOffset(1, err).NotTo(HaveOccurred(), "%s\n%s", command, out)
		return string(out)
	}

	It("runs every command of the section, in order, to a report", func(ctx SpecContext) {
		for _, command := range readmeCommands {
			By(command)
			switch {
			case strings.HasPrefix(command, "curl "):
				// Packed in BeforeAll from E2E_STRIMZI_INSTALL: no internet.
				Expect(filepath.Join(work, "strimzi-1.2.0.tar.gz")).To(BeAnExistingFile())

			case strings.HasPrefix(command, "kubectl create -f strimzi-1.2.0/"):
				sh(ctx, command)
				for _, crd := range []string{"kafkas.kafka.strimzi.io", "kafkanodepools.kafka.strimzi.io"} {
					kubectl(nil, "wait", "--for=condition=Established", "--timeout=60s", "crd/"+crd)
				}
				out := kubectl(nil, "get", "rolebindings,clusterrolebindings", "-A", "-o", "jsonpath={range .items[*]}{.subjects[*].namespace}{' '}{end}")
				Expect(out).NotTo(ContainSubstring("myproject"), "the sed put Strimzi's bindings in namespace kafka")

			case strings.HasPrefix(command, "helm install "):
				status, err := action.NewStatus(helmConfig()).Run(releaseName)
				Expect(err).NotTo(HaveOccurred(), "the suite's Helm SDK install of %s", releaseName)
				Expect(status.Info.Status).To(Equal(release.StatusDeployed))
				Expect(status.Chart.Metadata.Name).To(Equal("streambench"))
				Expect(status.Namespace).To(Equal(operatorNamespace))

			case strings.HasPrefix(command, "kubectl taint "):
				sh(ctx, command)
				out := kubectl(nil, "get", "node", node, "-o", "jsonpath={.spec.taints[?(@.key=='dedicated')].value}")
				Expect(out).To(Equal("streaming"))
				// The test cluster's one node also runs the workers.
				kubectl(nil, "taint", "nodes", node, "dedicated-")

			case strings.Contains(command, "local-nvme-pv.yaml"):
				sh(ctx, command)
				Expect(kubectl(nil, "get", "pv", "local-nvme-"+node+"-nvme0", "-o", "jsonpath={.spec.local.path}")).
					To(Equal("/mnt/nvme0/"+node), "README's disk of a node is at a path of that node's own")

			case strings.HasSuffix(command, "run-ack2-async.yaml"):
				sh(ctx, command)
				// The operator provisions the managed sample through Strimzi:
				// its Kafka appears (brokers would need Strimzi's image).
				Eventually(func(g Gomega) {
					out, err := kubectlE(nil, "-n", "kafka", "get", "kafkas.kafka.strimzi.io", "-o", "name")
					g.Expect(err).NotTo(HaveOccurred())
					g.Expect(out).NotTo(BeEmpty(), "no Kafka for run-ack2-async yet")
				}).WithTimeout(2 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())

			case strings.HasSuffix(command, "run-existing-kafka.yaml"):
				shortenExistingSample(filepath.Join(work, "config", "samples", "run-existing-kafka.yaml"), kafka.Bootstrap())
				sh(ctx, command)

			case strings.HasPrefix(command, "kubectl get br ") && strings.HasSuffix(command, " -w"):
				line := watchUntil(ctx, work, binDir, fill(command, node), "run-existing-kafka", runTimeout)
				GinkgoWriter.Printf("%s\n", line)
				// The printer columns' figures are rounded (status.display).
				Expect(line).To(MatchRegexp(`\sSucceeded\s+\d+\.\d\d\s+\d+\.\d\d\s+\d+\.\d\d\s`), "kubectl get br shows rounded figures")

			case strings.HasPrefix(command, "streambench report "):
				out := sh(ctx, command)
				report := filepath.Join(work, "results", "run-existing-kafka", "report.html")
				Expect(report).To(BeAnExistingFile(), out)
				Expect(strings.TrimSpace(out)).To(HaveSuffix("report.html"))

			default:
				sh(ctx, command)
			}
		}
		var run v1alpha1.BenchmarkRun
		Expect(k8s.Get(ctx, types.NamespacedName{Namespace: "kafka", Name: "run-existing-kafka"}, &run)).To(Succeed())
		Expect(run.Status.Phase).To(Equal(v1alpha1.PhaseSucceeded))
	}, SpecTimeout(runTimeout+8*time.Minute))
})

// fill puts the test cluster's node where the README has placeholders.
func fill(command, node string) string {
	return strings.NewReplacer("<nvme-node>", node, "<client-node>", node).Replace(command)
}

// packStrimzi packs Strimzi's install files as the release tarball has
// them: strimzi-1.2.0/install/cluster-operator/*.yaml.
func packStrimzi(dir, out string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("E2E_STRIMZI_INSTALL=%s has no *.yaml files (%v): give Strimzi 1.2.0's install/cluster-operator directory", dir, err)
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	for _, p := range files {
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: "strimzi-1.2.0/install/cluster-operator/" + filepath.Base(p), Mode: 0o644, Size: int64(len(raw)), ModTime: time.Now()}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(raw); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// shortenExistingSample points the sample at the suite's brokers and makes
// its workload short and light; every replaced value must be there, so a
// changed sample fails here rather than running something else.
func shortenExistingSample(path, bootstrap string) {
	raw, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	s := string(raw)
	for _, r := range []struct{ re, with string }{
		{`bootstrapServers: \S+`, "bootstrapServers: " + bootstrap},
		{`producerRate: \d+`, "producerRate: 200"},
		{`testDurationMinutes: \d+`, "testDurationMinutes: 0.5\n    warmupDurationMinutes: 0.25"},
		{`partitionsPerTopic: \d+`, "partitionsPerTopic: 2"},
	} {
		re := regexp.MustCompile(r.re)
		Expect(re.FindAllString(s, -1)).To(HaveLen(1), "config/samples/run-existing-kafka.yaml has no single %q", r.re)
		s = re.ReplaceAllString(s, r.with)
	}
	Expect(os.WriteFile(path, []byte(s), 0o644)).To(Succeed())
}

// watchUntil runs a `kubectl get -w` command and returns the first line of
// the run that says Succeeded; a Failed line, or the timeout, fails.
func watchUntil(ctx context.Context, dir, binDir, command, run string, timeout time.Duration) string {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", command)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	stdout, err := cmd.StdoutPipe()
	Expect(err).NotTo(HaveOccurred())
	Expect(cmd.Start()).To(Succeed())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	sc := bufio.NewScanner(stdout)
	var seen []string
	for sc.Scan() {
		line := sc.Text()
		seen = append(seen, line)
		fields := strings.Fields(line)
		if len(fields) < 4 || fields[0] != run {
			continue
		}
		switch fields[3] {
		case string(v1alpha1.PhaseSucceeded):
			return line
		case string(v1alpha1.PhaseFailed):
			Fail(fmt.Sprintf("%s failed:\n%s\n%s", run, strings.Join(seen, "\n"), kubectlOr("-n", "kafka", "get", "br", run, "-o", "jsonpath={.status.message}")))
		}
	}
	Fail(fmt.Sprintf("%s: no Succeeded line for %s within %s:\n%s", command, run, timeout, strings.Join(seen, "\n")))
	return ""
}

func kubectlOr(args ...string) string {
	out, err := kubectlE(nil, args...)
	if err != nil {
		return err.Error()
	}
	return out
}
