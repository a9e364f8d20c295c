//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
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
// its node label. It is built without Kubernetes service discovery, so the
// spec finds the pods through the API itself and hands them over as a file
// (file_sd), every 2 s, as prometheus-operator would rewrite its targets.
// Pods' IPs are routable from the host only on the local cluster (its
// bridge); kind's are not, which is why the spec asks for this only there.
type hostPrometheus struct {
	url string
}

func startHostPrometheus(ctx context.Context, ns, podSelector, node string) *hostPrometheus {
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
  file_sd_configs:
  - files: [%q]
    refresh_interval: 2s
- job_name: kubelet-cadvisor
  scheme: https
  metrics_path: /metrics/cadvisor
  tls_config: {insecure_skip_verify: true}
  static_configs:
  - targets: ["%s:10250"]
    labels: {node: %q}
`, targets, brokerHost, node)
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
			writePodTargets(watchCtx, ns, podSelector, targets)
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

// writePodTargets writes the running pods of ns matching the label
// selector as file_sd targets on Strimzi's metrics port, atomically.
func writePodTargets(ctx context.Context, ns, selector, path string) {
	var pods corev1.PodList
	sel, err := labels.Parse(selector)
	if err != nil {
		return
	}
	if err := k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return
	}
	type group struct {
		Targets []string          `json:"targets"`
		Labels  map[string]string `json:"labels"`
	}
	groups := []group{}
	for _, p := range pods.Items {
		if p.Status.PodIP == "" || p.Status.Phase != corev1.PodRunning {
			continue
		}
		groups = append(groups, group{Targets: []string{p.Status.PodIP + ":9404"}, Labels: map[string]string{"namespace": p.Namespace, "pod": p.Name}})
	}
	raw, _ := json.Marshal(groups)
	tmp := path + ".tmp"
	if os.WriteFile(tmp, raw, 0o644) == nil {
		_ = os.Rename(tmp, path)
	}
}
