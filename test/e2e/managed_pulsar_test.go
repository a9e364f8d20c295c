//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/provision/pulsar"
	"github.com/streambench/streambench-operator/internal/results"
)

// The managed Pulsar path for real: the operator, installed from
// charts/streambench with its own RBAC, installs the Apache Pulsar chart
// 4.7.0 (unchanged, served by the suite: chartrepo_test.go) for a run; its
// ZooKeeper, bookie, autorecovery and broker run as pods of the image
// hack/images/pulsar.sh assembles (docker.io/apachepulsar/pulsar-all:4.0.7,
// imported by `make test-e2e-managed`); the run goes from `kubectl apply`
// to Succeeded at level 1 (journal sync), scraped through the chart's own
// PodMonitors as a default kube-prometheus-stack would scrape them, and
// its deletion leaves no release, claim, pod or Failed volume on any node.
// The sample as a small cluster runs it (run-ack2-async-pulsar of
// config/samples-small: three bookies, one per node, ensemble 3, write
// quorum 3, ack quorum 2; one broker and one ZooKeeper: threeNodePulsarRun)
// at levels 2 and 1 on three nodes, its ledgers' ensembles read from the
// metadata store during the run; one bookie and one broker, an ensemble of
// 1 acknowledged by it, for the rest. With
// spec.cluster.managed.security (label managed-security) the same run asks
// for the chart's TLS and JWT authentication: the operator makes the CA,
// the brokers' certificate, the signing key and the tokens (no
// cert-manager), and the clients use pulsar+ssl://, https:// and their own
// token, so its figures compare with the plain run's.

// promRelease is the release label a default kube-prometheus-stack's
// Prometheus selects PodMonitors by (its Helm release name); the operator
// chart's monitoring.release default.
const promRelease = "kube-prometheus-stack"

var _ = Describe("managed Pulsar through the Apache Pulsar chart", Label("managed", "managed-pulsar"), Ordered, ContinueOnFailure, SpecPriority(1), func() {
	// storageClass is the bookies' disks' (journal and ledgers, two per
	// node), metadataClass ZooKeeper's own (one per node).
	var storageClass, metadataClass string
	// nodes are the samples' node pool: every node that takes pods.
	var nodes []corev1.Node
	var prom *hostPrometheus

	BeforeAll(func(ctx SpecContext) {
		Expect(pulsarChartRepo).NotTo(BeEmpty(), "the suite serves no Pulsar chart: %s has none (set E2E_PULSAR_CHART to the Apache Pulsar chart 4.7.0)", pulsarChartDir())
		By("installing the Prometheus Operator's PodMonitor CRD, as kube-prometheus-stack does, so runs get the chart's PodMonitors")
		kubectl(nil, "apply", "--server-side", "-f", filepath.Join(upstreamDir(), "prometheus-operator-v0.93.0", "monitoring.coreos.com_podmonitors.yaml"))
		kubectl(nil, "wait", "--for=condition=Established", "--timeout=60s", "crd/podmonitors.monitoring.coreos.com")
		// The bookies' journal and ledgers, ZooKeeper's data; the testbed
		// probe takes none of a static class's disks.
		nodes = labelStreamingNodes(ctx)
		storageClass = localDisks(ctx, ownDiskClass(), 2, "2Gi", nodeNames(nodes)...)
		// ZooKeeper's own, off the bookies' disks: on any node, as a
		// metadata store's class need not be node-local.
		metadataClass = localDisks(ctx, ownDiskClass(), 1, "2Gi", nodeNames(nodes)...)
		if nodesAreThisHost(ctx) {
			By("starting a Prometheus on this host that scrapes what the run's PodMonitors select, as prometheus-operator would")
			prom = startHostPrometheusWith(ctx, nodes, func(ctx context.Context) []targetGroup { return podMonitorTargets(ctx, testNS) })
		} else {
			notChecked("the managed Pulsar run's broker figures (CPU, GC and the bookie's journal latency from the pods the chart's PodMonitors select, through Prometheus)",
				"the pods of this cluster are not reachable from this host, where the suite's Prometheus runs: not the local cluster")
		}
	})

	// run-ack2-async-pulsar of config/samples-small
	// (threeNodePulsarRun): three bookies, one per node, ensemble 3,
	// write quorum 3, ack quorum 2, at the sample's level 2 (the journal
	// not synced before the ack) and at level 1 (journal synced), on the
	// three-node cluster; ZooKeeper on a class of its own.
	for _, level := range []v1alpha1.Level{v1alpha1.Level2, v1alpha1.Level1} {
		It(fmt.Sprintf("runs the three-bookie sample at level %d to Succeeded, one bookie per node, its ledgers on all 3, and leaves no release, claim, pod or Failed volume on any node", level), func(ctx SpecContext) {
			expectThreeNodes(nodes)
			start := time.Now()
			run := threeNodePulsarRun(fmt.Sprintf("e2e-pulsar-3n-l%d", level), level, storageClass, metadataClass)
			if level == v1alpha1.Level1 {
				// A bookie's pod deleted under load. With ensemble 3 on 3
				// bookies no bookie can replace it, and without more the
				// writes waited for the StatefulSet to bring it back (issue
				// 40's runs: lowest interval 0 %, the bookie back after
				// 33 s). The matched twin of the Kafka broker-failure
				// sample (run-ack2-async-pulsar-bookie-failure) turns on
				// the brokers' delayEnsembleChange, with which the local
				// experiment (TestRunPulsarKillBookie) kept writing at the
				// ack quorum: that, through the chart, on three nodes.
				// Then the topic's owner, looked up at the fault's time
				// (the one broker here): paused 3 s.
				withFaults(run, e2eFault(v1alpha1.FaultDeletePod, "bookie-1", 40*time.Second, 0),
					e2eFault(v1alpha1.FaultPause, "leader", 90*time.Second, 3*time.Second))
				if run.Spec.Cluster.Managed.BrokerConfig == nil {
					run.Spec.Cluster.Managed.BrokerConfig = map[string]string{}
				}
				run.Spec.Cluster.Managed.BrokerConfig[durability.PulsarBrokerDelayEnsembleChange] = "true"
			}
			if prom != nil {
				run.Spec.Monitoring = &v1alpha1.MonitoringSpec{PrometheusURL: prom.url}
			}
			applyRun(run)
			teardownOnFailure(run)
			rel := pulsar.ReleaseName(run)

			By("three bookies, each on a node of its own (their pods' spec.nodeName), the broker beside one, in the run's envelope")
			running := waitForPhase(ctx, run, v1alpha1.PhaseRunning, 15*time.Minute)
			logf("%s Running after %s", run.Name, time.Since(start).Round(time.Second))
			podsOf := func(component string) []corev1.Pod {
				var pods corev1.PodList
				Expect(k8s.List(ctx, &pods, client.InNamespace(testNS), client.MatchingLabels{"release": rel, "component": component})).To(Succeed())
				return pods.Items
			}
			bookies := podsOf(pulsar.ComponentBookie)
			bookieNodes := expectOnePerNode(bookies, 3, "bookie")
			expectOnePerNode(podsOf(pulsar.ComponentBroker), 1, "broker")
			for _, p := range append(slices.Clone(bookies), podsOf(pulsar.ComponentBroker)...) {
				Expect(p.Spec.Containers[0].Resources.Limits.Memory().String()).To(Equal("1Gi"), p.Name)
			}
			logf("bookies on %s:\n%s", strings.Join(bookieNodes, ", "), kubectl(nil, "-n", testNS, "get", "pods", "-o", "wide", "-l", "release="+rel))

			By("Helm's release record is in the operator's namespace, out of the tenant's reach, and none is in the run's (docs/security.md)")
			Expect(releaseRecords(operatorNamespace, rel)).NotTo(BeEmpty(), "the release's record in %s", operatorNamespace)
			Expect(releaseRecords(testNS, rel)).To(BeEmpty(), "a release record in the run's namespace")

			By("ZooKeeper's data is on its own class, off the bookies' disks")
			var claims corev1.PersistentVolumeClaimList
			Expect(k8s.List(ctx, &claims, client.InNamespace(testNS), client.MatchingLabels{"release": rel, "component": pulsar.ComponentZooKeeper})).To(Succeed())
			Expect(claims.Items).NotTo(BeEmpty(), "ZooKeeper's claims")
			for _, c := range claims.Items {
				Expect(ptr.Deref(c.Spec.StorageClassName, "")).NotTo(Equal(storageClass), "ZooKeeper's claim %s", c.Name)
				if metadataClass != "" {
					Expect(ptr.Deref(c.Spec.StorageClassName, "")).To(Equal(metadataClass), "ZooKeeper's claim %s", c.Name)
				}
			}

			By("the metadata store says every ledger of the run has the sample's quorums, its entries on all three bookies, while the load runs")
			q := running.Status.Durability.Pulsar
			Expect(q).NotTo(BeNil(), "status.durability.pulsar")
			// Both levels replicate to a majority before the ack; level 1
			// also syncs the journal.
			Expect([]int32{q.EnsembleSize, q.WriteQuorum, q.AckQuorum}).To(Equal([]int32{3, 3, 2}), "the sample's quorums at level %d", level)
			sync := strconv.FormatBool(level == v1alpha1.Level1)
			Expect(q.Bookie).To(HaveKeyWithValue("journalSyncData", sync), "level %d", level)
			By("each bookie's own configuration, as the chart's start script wrote it, says journalSyncData=" + sync)
			for _, b := range bookies {
				Expect(strings.TrimSpace(kubectl(nil, "-n", testNS, "exec", b.Name, "--", "grep", "-E", "^journalSyncData=", "conf/bookkeeper.conf"))).
					To(Equal("journalSyncData="+sync), "bookie %s", b.Name)
			}
			if len(run.Spec.Faults) > 0 {
				By("the broker's own configuration, as the chart's start script wrote it, turns delayEnsembleChange on (a key broker.conf lacks: PULSAR_PREFIX_)")
				brokerPod := podsOf(pulsar.ComponentBroker)[0].Name
				Expect(kubectl(nil, "-n", testNS, "exec", brokerPod, "--", "grep", "-E", "^bookkeeper_delayEnsembleChange=", "conf/broker.conf")).
					To(ContainSubstring("bookkeeper_delayEnsembleChange=true"), "broker %s's conf/broker.conf", brokerPod)
			}
			recovery := podsOf(pulsar.ComponentRecovery)
			Expect(recovery).NotTo(BeEmpty(), "the autorecovery pod")
			written, ledgers := expectLedgersOnBookies(ctx, run, recovery[0].Name, *q)
			Expect(written).To(HaveLen(3), "the bookies the ledgers are on:\n%s", ledgers)
			logf("ledgers on bookies %s (ensemble %d, write %d, ack %d)", strings.Join(written, ", "), q.EnsembleSize, q.WriteQuorum, q.AckQuorum)

			got := waitForPhase(ctx, run, v1alpha1.PhaseSucceeded, 15*time.Minute)
			logf("%s Succeeded after %s", run.Name, time.Since(start).Round(time.Second))
			expectResults(ctx, got, v1alpha1.SystemPulsar)
			if len(run.Spec.Faults) > 0 {
				By("the bookie's deletion was injected on the run's own pod at its time, and its figures are in status; no acknowledged message was lost")
				logf("%s faults:\n%s", got.Name, expectFaults(got))
				logf("status.faults: %s", kubectl(nil, "-n", testNS, "get", "benchmarkrun", got.Name, "-o", "jsonpath={.status.faults}"))
				By("with delayEnsembleChange, which the brokers' configuration has and the testbed records, the writes never stopped: the run tolerates one bookie lost, as its Kafka twin one broker")
				Expect(got.Status.Testbed).NotTo(BeNil())
				Expect(got.Status.Testbed.Topology.DelayEnsembleChange).To(BeTrue(), "status.testbed.topology.delayEnsembleChange")
				im := got.Status.Faults[0].Impact
				Expect(im.LowestRateFraction).To(BeNumerically(">", 0), "an interval with no acknowledgement after the bookie's deletion, with delayEnsembleChange")
				By("leader on Pulsar is the broker that owned the first topic at the fault's time, named by the coordinator from the topic lookup")
				Expect(got.Status.Faults[1].Resolved).To(MatchRegexp(`^leader broker-0, owner of streambench/sb-[^ ]+/topic-0[^ ]* \(pulsar://[^ ]*-broker-0\.[^ ]+\): `), "fault 1's record")
			}
			logf("%s", kubectl(nil, "-n", testNS, "get", "benchmarkrun", got.Name, "-o", "wide"))
			p := got.Status.Results.PublishLatencyMs
			logf("%s (three bookies, E3 W3 A%d, level %d): publish p50 %.2f ms, p99 %.2f ms, %.2f MB/s", got.Name, q.AckQuorum, level, p.P50, p.P99, got.Status.Results.PublishMBPerSec)
			logf("envelope: %s", kubectl(nil, "-n", testNS, "get", "benchmarkrun", got.Name, "-o", "jsonpath={.status.testbed.topology.components}"))
			Expect(got.Status.Testbed.Topology.Bookies).To(Equal(int32(3)))
			expectOneMachine(got, bookieNodes)

			By("the durability achieved is the level asked for, verified by the experiment for the Pulsar the chart ran")
			d := got.Status.Durability
			Expect(d.AchievedLevel).To(Equal(level), d.Explanation)
			Expect(d.BrokerVersion).To(Equal("4.0.7"))
			Expect(d.Verification).To(Equal(v1alpha1.Verified), "Pulsar %s: %s", d.BrokerVersion, d.Explanation)
			logf("durability: %s", d.Explanation)

			By("the brokers ran on Java 21, the image's, read by the testbed's probe")
			expectBrokerJava(ctx, got, "apachepulsar/pulsar-all:4.0.7")
			Expect(got.Status.Testbed.Topology.Version).To(Equal("4.0.7"))
			Expect(got.Status.Testbed.Note).To(ContainSubstring("Pulsar 4.0.7, not 4.0.12 (the default of chart pulsar 4.7.0)"),
				"the testbed says the spec's Pulsar is not the chart's default")

			if prom != nil {
				By("the broker resources come from the pods the chart's PodMonitors select, through Prometheus")
				br := got.Status.Results.BrokerResources
				Expect(br).NotTo(BeNil(), func() string { // the notes are read only on failure
					return fmt.Sprintf("status.results.brokerResources; monitoring: %+v; %s", got.Status.Monitoring, resultNotes(ctx, got))
				})
				logf("broker resources: %s", kubectl(nil, "-n", testNS, "get", "benchmarkrun", got.Name, "-o", "jsonpath={.status.results.brokerResources}"))
				Expect(br.Source).To(Equal("prometheus"))
				Expect(br.CPUCores).NotTo(BeNil())
				Expect(*br.CPUCores).To(BeNumerically(">", 0))
				Expect(br.GCPauseMs).NotTo(BeNil())
				Expect(br.JournalLatencyMs).NotTo(BeNil(), "the bookie's journal latency (bookie_journal_JOURNAL_ADD_ENTRY)")
				Expect(br.MemoryGiB).NotTo(BeNil(), "the pods' working set, from the kubelets' cAdvisor")
				c := got.Status.Results.Cost
				Expect(c).NotTo(BeNil())
				Expect(c.MBPerSecPerCore).NotTo(BeNil(), c.Missing)
				logf("cost: %s", kubectl(nil, "-n", testNS, "get", "benchmarkrun", got.Name, "-o", "jsonpath={.status.results.cost}"))
			}

			By("streambench report renders the run's durability and broker resources")
			html := renderReport(ctx, got)
			durabilitySection := htmlSection(html, "<section><h2>Durability in effect</h2>")
			Expect(durabilitySection).To(ContainSubstring("journalSyncData"))
			Expect(html).To(ContainSubstring("Pulsar 4.0.7, not 4.0.12"), "the report says the Pulsar is not the chart's default")
			logf("report, durability in effect: %s", durabilitySection)
			Expect(html).To(ContainSubstring(`<div class="warn" id="machines">`), "the report says the nodes are one machine")
			if prom != nil {
				resources := htmlSection(html, `<section id="broker-resources">`)
				Expect(resources).To(ContainSubstring("journal"))
				Expect(html).To(ContainSubstring(`<section id="cost"><h2>Efficiency and cost</h2>`), "the report's cost card")
				logf("report, broker resources: %s", resources)
			}

			By("kubectl delete leaves no release, no claim, no pod in the API or on any node's kubelet and, once freed as README says, no Failed volume on any node")
			kubectl(nil, "-n", testNS, "delete", "benchmarkrun", got.Name, "--wait=true", "--timeout=5m")
			Eventually(func() string {
				return releaseRecords(operatorNamespace, rel) +
					kubectl(nil, "-n", testNS, "get", "pvc,statefulset,job,pod", "-o", "name", "-l", pulsar.ClaimSelector(rel).String())
			}).WithTimeout(5 * time.Minute).WithPolling(5 * time.Second).Should(BeEmpty())
			Eventually(func() []string {
				return podsOnNodes(nodes, testNS, labels.SelectorFromSet(labels.Set{"release": rel}))
			}).WithTimeout(2*time.Minute).WithPolling(5*time.Second).Should(BeEmpty(), "the kubelets still run the run's pods")
			freeLocalDisks(ctx)
			logf("%s: create to clean after %s", run.Name, time.Since(start).Round(time.Second))
		}, SpecTimeout(35*time.Minute))
	}

	It("runs a one-bookie Pulsar with TLS and token authentication to Succeeded, its clients using both, and leaves no release, Secret, claim or Failed volume", Label("managed-security"), func(ctx SpecContext) {
		start := time.Now()
		run := managedPulsarRun("e2e-pulsar-tls", storageClass, metadataClass)
		run.Spec.Cluster.Managed.Security = &v1alpha1.ManagedSecurity{TLS: true, Authentication: v1alpha1.ManagedAuthToken}
		applyRun(run)
		teardownOnFailure(run)
		rel := pulsar.ReleaseName(run)

		running := waitForPhase(ctx, run, v1alpha1.PhaseRunning, 15*time.Minute)
		logf("%s Running after %s", run.Name, time.Since(start).Round(time.Second))
		Expect(running.Status.Brokers.ServiceURL).To(Equal("pulsar+ssl://" + rel + "-broker." + testNS + ".svc:6651"))
		Expect(running.Status.Brokers.AdminURL).To(Equal("https://" + rel + "-broker." + testNS + ".svc:8443"))
		By("the operator made the chart's Secrets, owned by the run")
		for _, name := range pulsar.SecretNames(running) {
			var s corev1.Secret
			Expect(k8s.Get(ctx, client.ObjectKey{Namespace: testNS, Name: name}, &s)).To(Succeed(), "Secret %s", name)
			Expect(s.OwnerReferences).To(ContainElement(HaveField("UID", running.UID)), "Secret %s", name)
		}
		if nodesAreThisHost(ctx) {
			By("the broker's TLS web port proves the certificate for its advertised name and refuses a client without a token")
			expectBrokerRefusesAnonymous(ctx, rel)
		} else {
			notChecked("the TLS broker's certificate for its advertised name and its refusal of a client without a token",
				"the broker pod is not reachable from this host: not the local cluster")
		}

		got := waitForPhase(ctx, run, v1alpha1.PhaseSucceeded, 15*time.Minute)
		logf("%s Succeeded after %s", run.Name, time.Since(start).Round(time.Second))
		expectResults(ctx, got, v1alpha1.SystemPulsar)
		logf("%s", kubectl(nil, "-n", testNS, "get", "benchmarkrun", got.Name, "-o", "wide"))
		p := got.Status.Results.PublishLatencyMs
		logf("%s (TLS + token): publish p50 %.2f ms, p99 %.2f ms, %.2f MB/s", got.Name, p.P50, p.P99, got.Status.Results.PublishMBPerSec)

		By("the results say how the clients reached the brokers: pulsar+ssl, Token, the TLS version, full verification")
		var cm corev1.ConfigMap
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: testNS, Name: got.Status.ResultsRef}, &cm)).To(Succeed())
		sum, err := results.Read(&cm)
		Expect(err).NotTo(HaveOccurred())
		Expect(sum.Security).NotTo(BeNil(), "summary.json has the security")
		Expect(sum.Security.Protocol).To(Equal("pulsar+ssl"))
		Expect(sum.Security.Mechanism).To(Equal("Token"))
		Expect(sum.Security.TLSVersion).To(HavePrefix("TLS 1."))
		Expect(sum.Security.Verification).To(Equal("full"))
		logf("security: %+v", *sum.Security)

		By("kubectl delete leaves no release, no Secret of the run's, no claim and, once freed, no Failed volume")
		kubectl(nil, "-n", testNS, "delete", "benchmarkrun", got.Name, "--wait=true", "--timeout=5m")
		Eventually(func() string {
			return releaseRecords(operatorNamespace, rel) +
				kubectl(nil, "-n", testNS, "get", "pvc,statefulset,job", "-o", "name", "-l", pulsar.ClaimSelector(rel).String()) +
				kubectl(nil, "-n", testNS, "get", "secret", "-o", "name", "-l", pulsar.LabelRun+"="+got.Name)
		}).WithTimeout(5 * time.Minute).WithPolling(5 * time.Second).Should(BeEmpty())
		for _, name := range pulsar.SecretNames(got) {
			Expect(apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKey{Namespace: testNS, Name: name}, &corev1.Secret{}))).To(BeTrue(), "Secret %s after the teardown", name)
		}
		freeLocalDisks(ctx)
	}, SpecTimeout(35*time.Minute))

	It("fails a run whose chart install fails, with the install's own error", func(ctx SpecContext) {
		run := managedPulsarRun("e2e-pulsar-bad", storageClass, metadataClass)
		// Not a label value: the API server refuses the chart's
		// StatefulSets, and helm install returns its words.
		run.Spec.Cluster.Managed.Placement.NodeSelector = map[string]string{"node-pool": "streaming pool"}
		applyRun(run)
		got := waitForPhase(ctx, run, v1alpha1.PhaseFailed, 5*time.Minute)
		logf("status.message: %s", got.Status.Message)
		Expect(got.Status.Message).To(ContainSubstring("streaming pool"))
		Expect(got.Status.Message).To(ContainSubstring("nodeSelector"))
		rel := pulsar.ReleaseName(got)
		Eventually(func() string {
			return releaseRecords(operatorNamespace, rel) + kubectl(nil, "-n", testNS, "get", "statefulset", "-o", "name", "-l", pulsar.ClaimSelector(rel).String())
		}).WithTimeout(2*time.Minute).WithPolling(5*time.Second).Should(BeEmpty(), "teardown removes the release of a failed run")
	}, SpecTimeout(10*time.Minute))
})

// releaseRecords names the Helm release records of the test namespace's
// release rel kept in namespace ns (the operator's keeps them, labelled
// with the release's namespace: internal/provision/pulsar, releasestore.go).
func releaseRecords(ns, rel string) string {
	sel := "owner=helm,name=" + rel + "," + pulsar.LabelReleaseNamespace + "=" + testNS
	if ns == testNS {
		sel = "owner=helm,name=" + rel // any record there at all
	}
	return kubectl(nil, "-n", ns, "get", "secret", "-o", "name", "-l", sel)
}

// expectBrokerRefusesAnonymous asks the release's first broker, at its pod
// address, for the clusters through the TLS web port: verified against
// the run's CA under the name the broker advertises (its pod under the
// headless Service), refused without a token (401), answered with the
// benchmark's token. This host reaches pod addresses (nodesAreThisHost).
func expectBrokerRefusesAnonymous(ctx context.Context, rel string) {
	var pod corev1.Pod
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: testNS, Name: rel + "-broker-0"}, &pod)).To(Succeed())
	var ca, token corev1.Secret
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: testNS, Name: pulsar.CASecretName(rel)}, &ca)).To(Succeed())
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: testNS, Name: pulsar.TokenSecretName(rel, pulsar.SubjectBenchmark)}, &token)).To(Succeed())
	roots := x509.NewCertPool()
	Expect(roots.AppendCertsFromPEM(ca.Data[pulsar.KeyCA])).To(BeTrue())
	advertised := pod.Name + "." + rel + "-broker-headless." + testNS + ".svc." + pulsar.ClusterDomain
	hc := &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: advertised}}}
	get := func(withToken bool) int {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("https://%s:%d/admin/v2/clusters", pod.Status.PodIP, pulsar.BrokerHTTPSPort), nil)
		Expect(err).NotTo(HaveOccurred())
		if withToken {
			req.Header.Set("Authorization", "Bearer "+string(token.Data[pulsar.KeyToken]))
		}
		resp, err := hc.Do(req)
		Expect(err).NotTo(HaveOccurred(), "HTTPS to the broker at %s as %s", pod.Status.PodIP, advertised)
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	Expect(get(false)).To(Equal(http.StatusUnauthorized), "a client without a token")
	Expect(get(true)).To(Equal(http.StatusOK), "the benchmark's token")
}

// managedPulsarRun is run-ack2-async-pulsar of config/samples-small
// (smallSample) on one node: one ZooKeeper, one bookie and one broker
// (under the sample's pool and tolerations), at durability level 1 with an
// ensemble of 1 (a level's own is 3): the one-bookie specs test what a run
// adds to the brokers (security, failures), not the replication, in a
// measured phase of halfAMinute. pulsarOnThisCluster says what else
// differs, and why.
func managedPulsarRun(prefix, storageClass, metadataClass string) *v1alpha1.BenchmarkRun {
	run := smallSample("run-ack2-async-pulsar", prefix, storageClass, metadataClass)
	m := run.Spec.Cluster.Managed
	m.Brokers, m.Bookies, m.MetadataStoreReplicas = 1, 1, 1
	pulsarOnThisCluster(m)
	run.Spec.Workload.TestDurationMinutes = ptr.To(halfAMinute)
	run.Spec.Durability = &v1alpha1.DurabilitySpec{
		Replication: &v1alpha1.ReplicationDurability{Replicas: 1, AckReplicas: 1, Mode: v1alpha1.ReplicationSync},
		Local:       &v1alpha1.LocalDurability{Mode: v1alpha1.LocalSync},
	}
	return run
}

// threeNodePulsarRun is run-ack2-async-pulsar of config/samples-small as
// a user applies it (smallSample): its three bookies under its placement,
// one per node (required anti-affinity), with its ensemble, write and ack
// quorum (3, 3, 2) at level (the sample's 2; level 1 also syncs the
// journal), the overlay's envelopes, disks and workload. What differs is
// this machine's alone: one broker and one ZooKeeper instead of the
// overlay's three each (the three nodes share two cores, which run three
// bookies and the other specs' runs beside them; a ledger's replication is
// the bookies'), and pulsarOnThisCluster's version.
func threeNodePulsarRun(prefix string, level v1alpha1.Level, storageClass, metadataClass string) *v1alpha1.BenchmarkRun {
	run := smallSampleAtLevel("run-ack2-async-pulsar", prefix, level, storageClass, metadataClass)
	m := run.Spec.Cluster.Managed
	Expect(m.Bookies).To(Equal(int32(3)), "the sample's bookies")
	m.Brokers, m.MetadataStoreReplicas = 1, 1
	pulsarOnThisCluster(m)
	return run
}

// pulsarOnThisCluster is what a Pulsar sample needs on the test cluster
// alone: Pulsar 4.0.7, the image the local cluster has (the samples name
// the chart's 4.0.12, which it would have to pull).
func pulsarOnThisCluster(m *v1alpha1.ManagedCluster) {
	m.Version = "4.0.7"
}

// podMonitorTargets does for the PodMonitors of ns what prometheus-operator
// does for a kube-prometheus-stack Prometheus (podMonitorSelector
// release: kube-prometheus-stack): every PodMonitor with that label, every
// running pod its selector matches, every endpoint's named container port
// and path. A PodMonitor without the label, or whose port no container
// names, yields no target, as it would not be scraped.
func podMonitorTargets(ctx context.Context, ns string) []targetGroup {
	var monitors unstructured.UnstructuredList
	monitors.SetAPIVersion("monitoring.coreos.com/v1")
	monitors.SetKind("PodMonitorList")
	if err := k8s.List(ctx, &monitors, client.InNamespace(ns), client.MatchingLabels{"release": promRelease}); err != nil {
		return nil
	}
	var groups []targetGroup
	for _, pm := range monitors.Items {
		matchLabels, _, _ := unstructured.NestedStringMap(pm.Object, "spec", "selector", "matchLabels")
		endpoints, _, _ := unstructured.NestedSlice(pm.Object, "spec", "podMetricsEndpoints")
		var pods corev1.PodList
		if err := k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: labels.SelectorFromSet(matchLabels)}); err != nil {
			continue
		}
		for _, p := range pods.Items {
			if p.Status.PodIP == "" || p.Status.Phase != corev1.PodRunning {
				continue
			}
			for _, e := range endpoints {
				ep, _ := e.(map[string]any)
				portName, _ := ep["port"].(string)
				path, _ := ep["path"].(string)
				if path == "" {
					path = "/metrics"
				}
				for _, c := range p.Spec.Containers {
					for _, port := range c.Ports {
						if port.Name != portName {
							continue
						}
						groups = append(groups, targetGroup{
							Targets: []string{p.Status.PodIP + ":" + strconv.Itoa(int(port.ContainerPort))},
							Labels:  map[string]string{"namespace": p.Namespace, "pod": p.Name, "container": c.Name, "job": ns + "/" + pm.GetName(), "__metrics_path__": path},
						})
					}
				}
			}
		}
	}
	return groups
}

// renderReport runs `streambench report -n <ns> <run>` as README does (a
// binary built from this tree) and returns the report's HTML.
func renderReport(ctx context.Context, run *v1alpha1.BenchmarkRun) string {
	work := GinkgoT().TempDir()
	bin := filepath.Join(work, "streambench")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/streambench")
	build.Dir, build.Env = repoRoot, append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "go build: %s", out)
	cmd := exec.CommandContext(ctx, bin, "report", "-n", run.Namespace, run.Name)
	cmd.Dir, cmd.Env = work, append(os.Environ(), "KUBECONFIG="+kubeconfig)
	out, err = cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "streambench report: %s", out)
	raw, err := os.ReadFile(filepath.Join(work, "results", run.Name, "report.html"))
	Expect(err).NotTo(HaveOccurred(), "streambench report: %s", out)
	return string(raw)
}

var htmlTag = regexp.MustCompile(`<[^>]*>`)

// htmlSection is the text of the section of html that starts with start,
// tags stripped and white space collapsed ("" when there is none).
func htmlSection(html, start string) string {
	i := strings.Index(html, start)
	if i < 0 {
		return ""
	}
	rest := html[i:]
	if j := strings.Index(rest, "</section>"); j >= 0 {
		rest = rest[:j]
	}
	return strings.Join(strings.Fields(htmlTag.ReplaceAllString(rest, " ")), " ")
}
