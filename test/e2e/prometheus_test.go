//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/internal/localbrokers"
)

// hostPrometheus is a real Prometheus (built from source, as the
// monitoring test's) on this host, listening where pods reach the host
// (brokerHost), scraping what kube-prometheus-stack would for a Strimzi
// Kafka: the Kafka pods' JMX exporter (port 9404), with the namespace and
// pod labels a PodMonitor target carries, and the kubelet's cAdvisor with
// its node label, of every node (the local cluster's nodes are all this
// host's kubelets, each on its own bridge address). It is built without Kubernetes service discovery, so the
// spec finds the pods through the API itself and hands them over as a file
// (file_sd), every 2 s, as prometheus-operator would rewrite its targets.
// Pods' IPs are routable from the host only on the local cluster (its
// bridge); kind's are not, which is why the spec asks for this only there.
type hostPrometheus struct {
	url string
}

func startHostPrometheus(ctx context.Context, ns, podSelector string, nodes []corev1.Node) *hostPrometheus {
	return startHostPrometheusWith(ctx, nodes, func(ctx context.Context) []targetGroup {
		return podTargets(ctx, ns, podSelector, 9404)
	})
}

// targetGroup is one file_sd entry.
type targetGroup struct {
	Targets []string          `json:"targets"`
	Labels  map[string]string `json:"labels"`
}

// startHostPrometheusWith is startHostPrometheus with the pod targets
// given by a function, asked every 2 s.
func startHostPrometheusWith(ctx context.Context, nodes []corev1.Node, targetsOf func(context.Context) []targetGroup) *hostPrometheus {
	bin := os.Getenv("PROMETHEUS_BIN")
	if bin == "" {
		out, err := exec.Command("bash", filepath.Join(repoRoot, "hack", "prometheus-binary.sh")).Output()
		Expect(err).NotTo(HaveOccurred(), "hack/prometheus-binary.sh")
		bin = strings.TrimSpace(string(out))
	}
	dir, err := os.MkdirTemp("", "streambench-e2e-prometheus-")
	Expect(err).NotTo(HaveOccurred())
	targets := filepath.Join(dir, "pods.json")
	Expect(os.WriteFile(targets, []byte("[]"), 0o644)).To(Succeed())
	cfg := fmt.Sprintf(`global:
  scrape_interval: 5s
  scrape_timeout: 5s
scrape_configs:
- job_name: kafka-pods
  # Kafka's JMX exporter walks every MBean on each scrape, which took
  # longer than 5 s on a busy CI machine: every scrape of a run's window
  # failed and the run had no broker figures.
  scrape_interval: 10s
  scrape_timeout: 10s
  file_sd_configs:
  - files: [%q]
    refresh_interval: 2s
- job_name: kubelet-cadvisor
  scheme: https
  metrics_path: /metrics/cadvisor
  tls_config: {insecure_skip_verify: true}
  static_configs:
`, targets)
	for _, n := range nodes {
		cfg += fmt.Sprintf("  - targets: [%q]\n    labels: {node: %q}\n", net.JoinHostPort(nodeInternalIP(n), "10250"), n.Name)
	}
	Expect(os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644)).To(Succeed())
	port, err := localbrokers.FreePort()
	Expect(err).NotTo(HaveOccurred())
	logFile, err := os.Create(filepath.Join(dir, "prometheus.log"))
	Expect(err).NotTo(HaveOccurred())
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+brokerHost+":"+strconv.Itoa(port))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	Expect(cmd.Start()).To(Succeed())
	p := &hostPrometheus{url: "http://" + brokerHost + ":" + strconv.Itoa(port)}

	watchCtx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for watchCtx.Err() == nil {
			writeTargets(targetsOf(watchCtx), targets)
			select {
			case <-watchCtx.Done():
			case <-time.After(2 * time.Second):
			}
		}
	}()
	DeferCleanup(func() {
		stop()
		<-done
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logFile.Close()
		_ = os.RemoveAll(dir)
	})
	Eventually(func() int {
		resp, err := http.Get(p.url + "/-/ready")
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}).WithTimeout(time.Minute).WithPolling(200*time.Millisecond).Should(Equal(http.StatusOK), func() string {
		b, _ := os.ReadFile(filepath.Join(dir, "prometheus.log"))
		return "Prometheus not ready:\n" + string(b)
	})
	return p
}

// podTargets are the running pods of ns matching the label selector, on
// port, with the namespace and pod labels a PodMonitor target carries.
func podTargets(ctx context.Context, ns, selector string, port int) []targetGroup {
	var pods corev1.PodList
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil
	}
	if err := k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil
	}
	var groups []targetGroup
	for _, p := range pods.Items {
		if p.Status.PodIP == "" || p.Status.Phase != corev1.PodRunning {
			continue
		}
		groups = append(groups, targetGroup{Targets: []string{p.Status.PodIP + ":" + strconv.Itoa(port)}, Labels: map[string]string{"namespace": p.Namespace, "pod": p.Name}})
	}
	return groups
}

// writeTargets writes the groups as a file_sd file, atomically.
func writeTargets(groups []targetGroup, path string) {
	if groups == nil {
		groups = []targetGroup{}
	}
	raw, _ := json.Marshal(groups)
	tmp := path + ".tmp"
	if os.WriteFile(tmp, raw, 0o644) == nil {
		_ = os.Rename(tmp, path)
	}
}
