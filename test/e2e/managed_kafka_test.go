//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/strimzi"
	"github.com/streambench/streambench-operator/internal/results"
)

// The managed Kafka path for real: a Strimzi cluster operator (built from
// source by hack/images/strimzi.sh, its images imported into the cluster, or
// pulled where a registry is reachable) deploys the brokers of a run, which
// goes from create to Succeeded under the operator installed from
// charts/streambench with its own RBAC, and the run's deletion leaves no
// Kafka, node pool, claim or pod on any node. The sample as a small
// cluster runs it (run-ack2-async of config/samples-small: three brokers,
// one per node, replication factor 3, min.insync.replicas 2) at level 2
// (no fsync before the ack) and level 1 (flush.messages=1), on three nodes
// (nodes_test.go), its topic's replicas read from the brokers during the
// run; and one broker, a replication factor of 1 acknowledged by it, at
// level 2 with spec.cluster.managed.security (label managed-security): a
// TLS listener with SCRAM-SHA-512 or mutual TLS, through a KafkaUser and
// Strimzi's User Operator (what security adds is the listener, not the
// replication: one broker keeps those specs short).
//
// E2E_STRIMZI_OPERATOR is the folder of that Strimzi's install files
// (install/ of hack/images/strimzi.sh's output); `make test-e2e` sets it.
//
// The longest container of the suite: scheduled first (SpecPriority) on
// parallel processes, so the others fill the time beside it.
var _ = Describe("managed Kafka through a real Strimzi operator", Label("managed", "managed-kafka", "needs-E2E_STRIMZI_OPERATOR"), Ordered, ContinueOnFailure, SpecPriority(2), func() {
	var storageClass string
	// nodes are the samples' node pool: every node that takes pods.
	var nodes []corev1.Node
	// operatorImage is the image the install files deploy the operator
	// from: the entity operator's User Operator runs it too.
	var operatorImage string
	// prom scrapes the brokers where their pods are reachable from this
	// host (the local cluster); nil elsewhere.
	var prom *hostPrometheus

	BeforeAll(func(ctx SpecContext) {
		dir := os.Getenv("E2E_STRIMZI_OPERATOR")
		Expect(dir).NotTo(BeEmpty(), "E2E_STRIMZI_OPERATOR is not set: give the folder of Strimzi's install files "+
			"(testdata/upstream/strimzi-1.2.0; on the local cluster `make test-e2e` also imports the images hack/images/strimzi.sh builds)")
		By("installing the Strimzi cluster operator from " + dir + " into " + testNS)
		installStrimzi(dir, testNS)
		operatorImage = strimziOperatorImage(dir)
		DeferCleanup(func() { uninstallStrimzi(dir, testNS) })
		kubectl(nil, "-n", testNS, "rollout", "status", "deployment/strimzi-cluster-operator", "--timeout=5m")
		// README's disks, where the cluster has no default StorageClass:
		// a broker claims two JBOD volumes on its node (the testbed probe
		// takes none of a static class's); the runs reuse them, wiped and
		// freed after each as README says.
		nodes = labelStreamingNodes(ctx)
		storageClass = localDisks(ctx, ownDiskClass(), 2, "2Gi", nodeNames(nodes)...)
		if nodesAreThisHost(ctx) {
			By("starting a Prometheus on this host that scrapes the Strimzi pods' metrics, as kube-prometheus-stack would")
			prom = startHostPrometheus(ctx, testNS, "strimzi.io/kind=Kafka", nodes)
		}
		if prom == nil {
			notChecked("the managed Kafka runs' broker figures (CPU and GC from the Strimzi pods' metrics, through Prometheus)",
				"the pods of this cluster are not reachable from this host, where the suite's Prometheus runs: not the local cluster")
		}
	})

	// run-ack2-async of config/samples-small (threeNodeKafkaRun):
	// three brokers, one per node, replication factor 3 and
	// min.insync.replicas 2, at the sample's level 2 (no fsync before the
	// ack) and at level 1 (flush.messages=1), on the three-node cluster.
	for _, level := range []v1alpha1.Level{v1alpha1.Level2, v1alpha1.Level1} {
		It(fmt.Sprintf("runs the three-broker sample at level %d to Succeeded, one broker per node, its topic's 3 replicas in sync, and leaves nothing on any node", level), func(ctx SpecContext) {
			expectThreeNodes(nodes)
			start := time.Now()
			run := threeNodeKafkaRun(fmt.Sprintf("e2e-strimzi-3n-l%d", level), level, storageClass)
			if level == v1alpha1.Level1 {
				// Issue 40's experiment: the pod of the broker leading the
				// first partition deleted under load (Strimzi brings it
				// back), then the leader of that moment stopped for 5 s
				// (SIGSTOP from its node); the coordinator names each
				// leader at the fault's time.
				withFaults(run, e2eFault(v1alpha1.FaultDeletePod, "leader", 40*time.Second, 0),
					e2eFault(v1alpha1.FaultPause, "leader", 90*time.Second, 5*time.Second))
			}
			if prom != nil {
				run.Spec.Monitoring = &v1alpha1.MonitoringSpec{PrometheusURL: prom.url}
			}
			applyRun(run)
			teardownOnFailure(run)
			cluster := strimzi.ClusterName(run)
			brokerLabels := client.MatchingLabels{"strimzi.io/cluster": cluster, "strimzi.io/kind": "Kafka"}

			By("three brokers, each on a node of its own (their pods' spec.nodeName), in the run's envelope")
			waitForPhase(ctx, run, v1alpha1.PhaseRunning, 15*time.Minute)
			logf("%s Running after %s", run.Name, time.Since(start).Round(time.Second))
			var pods corev1.PodList
			Expect(k8s.List(ctx, &pods, client.InNamespace(testNS), brokerLabels)).To(Succeed())
			brokerNodes := expectOnePerNode(pods.Items, 3, "broker")
			logf("brokers on %s:\n%s", strings.Join(brokerNodes, ", "),
				kubectl(nil, "-n", testNS, "get", "pods", "-o", "wide", "-l", "strimzi.io/cluster="+cluster))
			for _, p := range pods.Items {
				c := p.Spec.Containers[0]
				Expect(c.Resources.Limits.Memory().String()).To(Equal("1Gi"), p.Name)
				Expect(c.Env).To(ContainElement(corev1.EnvVar{Name: "KAFKA_HEAP_OPTS", Value: "-Xms512m -Xmx512m"}),
					"%s: the heap Strimzi passes to kafka_run.sh, from the node pool's jvmOptions", p.Name)
			}

			By("the brokers say the run's topic has 3 replicas, all 3 in sync, and min.insync.replicas 2, while the load runs")
			topics := expectKafkaTopicsInSync(ctx, run, pods.Items[0].Name, 3, "2")
			logf("%s", topics)

			got := waitForPhase(ctx, run, v1alpha1.PhaseSucceeded, 15*time.Minute)
			logf("%s Succeeded after %s", run.Name, time.Since(start).Round(time.Second))
			expectResults(ctx, got, v1alpha1.SystemKafka)
			logf("%s", kubectl(nil, "-n", testNS, "get", "benchmarkrun", got.Name, "-o", "wide"))
			if len(run.Spec.Faults) > 0 {
				By("each fault was injected on the run's own broker at its time, and its figures are in status; no acknowledged message was lost")
				logf("%s faults:\n%s", got.Name, expectFaults(got))
				logf("status.faults: %s", kubectl(nil, "-n", testNS, "get", "benchmarkrun", got.Name, "-o", "jsonpath={.status.faults}"))
				pause := got.Status.Faults[1].Impact
				Expect(pause.WorstP99Ms).NotTo(BeNil())
				// A stopped leader is not fenced before the controller's
				// session timeout (9 s): a third of the sends (its
				// partition's) wait the 5 s, in the latency corrected for
				// the sends it held back. (A stopped follower stalls
				// acks=all the same: internal/localrun's
				// TestRunKafkaPauseFollower.)
				Expect(*pause.WorstP99Ms).To(BeNumerically(">=", 2500), "a 5 s stop of a partition's leader must show in the corrected p99")
				for _, st := range got.Status.Faults {
					Expect(st.Resolved).To(HavePrefix("leader broker-"), "the coordinator named the leader")
				}
				By("the signal Job ran in the operator's namespace, never the run's, and is gone")
				expectNoPrivilegedJobs(ctx, got)
			}
			p := got.Status.Results.PublishLatencyMs
			logf("%s (three brokers, RF 3, level %d): publish p50 %.2f ms, p99 %.2f ms, %.2f MB/s", got.Name, level, p.P50, p.P99, got.Status.Results.PublishMBPerSec)
			Expect(got.Status.Testbed.Topology.Components).To(Equal([]v1alpha1.ComponentEnvelope{
				{Component: "broker", Replicas: 3, CPURequest: "200m", MemoryRequest: "1Gi", MemoryLimit: "1Gi", Heap: "512Mi"}}))
			Expect(got.Status.Testbed.Topology.Brokers).To(Equal(int32(3)))
			expectOneMachine(got, brokerNodes)

			By("the durability achieved is the level asked for, replicated three ways, on the broker Strimzi ran")
			d := got.Status.Durability
			Expect(d.AchievedLevel).To(Equal(level), d.Explanation)
			Expect(d.Verification).To(Equal(v1alpha1.Verified), "Kafka %s: %s", d.BrokerVersion, d.Explanation)
			Expect(d.BrokerVersion).To(Equal("4.3.1"), "the sample's Kafka, which Strimzi 1.2.0 deploys")
			Expect(d.Kafka).NotTo(BeNil())
			Expect(d.Kafka.ReplicationFactor).To(Equal(int32(3)))
			Expect(d.Kafka.Topic).To(HaveKeyWithValue("min.insync.replicas", "2"))

			By("the brokers ran on Java 21, the image's, read by the testbed's probe")
			expectBrokerJava(ctx, got, "quay.io/strimzi/kafka:1.2.0-kafka-4.3.1")

			if prom != nil {
				By("the broker resources come from the three Strimzi pods' own metrics, through Prometheus")
				br := got.Status.Results.BrokerResources
				Expect(br).NotTo(BeNil(), func() string { // the notes are read only on failure
					return fmt.Sprintf("status.results.brokerResources; monitoring: %+v; %s", got.Status.Monitoring, resultNotes(ctx, got))
				})
				Expect(br.Source).To(Equal("prometheus"))
				Expect(br.Brokers).To(Equal(3))
				Expect(br.CPUCores).NotTo(BeNil())
				Expect(*br.CPUCores).To(BeNumerically(">", 0))
				Expect(br.GCPauseMs).NotTo(BeNil())
				Expect(br.MemoryGiB).NotTo(BeNil(), "the pods' working set, from the kubelets' cAdvisor")
				Expect(*br.MemoryGiB).To(BeNumerically(">", 0))
				logf("broker resources: %s", kubectl(nil, "-n", testNS, "get", "benchmarkrun", got.Name, "-o", "jsonpath={.status.results.brokerResources}"))

				By("the results are priced from those resources (the default list prices): MB/s per core, cost per hour")
				c := got.Status.Results.Cost
				Expect(c).NotTo(BeNil())
				Expect(c.MBPerSecPerCore).NotTo(BeNil(), c.Missing)
				Expect(*c.MBPerSecPerCore).To(BeNumerically("~", got.Status.Results.PublishMBPerSec / *br.CPUCores, 1e-9))
				Expect(c.PerHour).NotTo(BeNil(), c.Missing)
				logf("cost: %s", kubectl(nil, "-n", testNS, "get", "benchmarkrun", got.Name, "-o", "jsonpath={.status.results.cost}"))
			}

			By("kubectl delete leaves no Kafka, node pool, claim or broker pod, in the API or on any node's kubelet")
			kubectl(nil, "-n", testNS, "delete", "benchmarkrun", got.Name, "--wait=true", "--timeout=5m")
			Eventually(func() string {
				return kubectl(nil, "-n", testNS, "get", "--ignore-not-found", "-o", "name", "kafkas.kafka.strimzi.io", cluster) +
					kubectl(nil, "-n", testNS, "get", "-o", "name", "kafkanodepools.kafka.strimzi.io,pvc,pod", "-l", "strimzi.io/cluster="+cluster)
			}).WithTimeout(5 * time.Minute).WithPolling(5 * time.Second).Should(BeEmpty())
			Eventually(func() []string {
				return podsOnNodes(nodes, testNS, labels.SelectorFromSet(labels.Set{"strimzi.io/cluster": cluster}))
			}).WithTimeout(2*time.Minute).WithPolling(5*time.Second).Should(BeEmpty(), "the kubelets still run the run's pods")
			By("README's disk recipe frees the disks the brokers used, on all three nodes")
			freeLocalDisks(ctx)
			logf("%s: create to clean after %s", run.Name, time.Since(start).Round(time.Second))
		}, SpecTimeout(30*time.Minute))
	}

	// spec.cluster.managed.security: Strimzi's TLS listener with its
	// cluster CA, and a KafkaUser the run creates, whose credentials the
	// User Operator (in the entity operator, from the same operator image)
	// writes into a Secret and onto the brokers; the clients read the CA
	// and the credentials from the Secrets mounted into the Jobs.
	for _, tc := range []struct {
		prefix   string
		auth     v1alpha1.ManagedAuthentication
		protocol string
	}{
		{"e2e-strimzi-scram", v1alpha1.ManagedAuthScramSHA512, "SASL_SSL"},
		{"e2e-strimzi-mtls", v1alpha1.ManagedAuthTLS, "SSL"},
	} {
		It(fmt.Sprintf("runs a one-broker Kafka with TLS and a %s KafkaUser to Succeeded and leaves no Kafka, KafkaUser, node pool or claim", tc.auth), Label("managed-security"), func(ctx SpecContext) {
			start := time.Now()
			run := managedKafkaRun(tc.prefix, v1alpha1.Level2, storageClass)
			run.Spec.Cluster.Managed.Security = &v1alpha1.ManagedSecurity{TLS: true, Authentication: tc.auth}
			if prom != nil {
				run.Spec.Monitoring = &v1alpha1.MonitoringSpec{PrometheusURL: prom.url}
			}
			applyRun(run)
			teardownOnFailure(run)
			cluster, user := strimzi.ClusterName(run), strimzi.UserName(run)

			By("Running only once Strimzi's tls listener and the User Operator's KafkaUser are ready")
			running := waitForPhase(ctx, run, v1alpha1.PhaseRunning, 10*time.Minute)
			logf("%s Running after %s", run.Name, time.Since(start).Round(time.Second))
			Expect(running.Status.Brokers.BootstrapServers).To(Equal(cluster + "-kafka-bootstrap." + testNS + ".svc:9093"))
			Expect(kubectl(nil, "-n", testNS, "get", "kafkausers.kafka.strimzi.io", user,
				"-o", `jsonpath={.spec.authentication.type} {.status.conditions[?(@.type=="Ready")].status} {.status.secret}`)).
				To(Equal(string(tc.auth) + " True " + user))
			// The entity operator runs the User Operator alone, from the
			// operator image, with Strimzi's own script (its container's
			// args; the image has no entrypoint of its own).
			Expect(kubectl(nil, "-n", testNS, "get", "deployment", cluster+"-entity-operator",
				"-o", `jsonpath={.spec.template.spec.containers[*].name} {.spec.template.spec.containers[*].image} {.spec.template.spec.containers[*].args}`)).
				To(Equal(`user-operator ` + operatorImage + ` ["/opt/strimzi/bin/user_operator_run.sh"]`))
			// Names of the Secret's keys only, never values.
			keys := kubectl(nil, "-n", testNS, "get", "secret", user, "-o", `go-template={{range $k, $v := .data}}{{$k}} {{end}}`)
			if tc.auth == v1alpha1.ManagedAuthScramSHA512 {
				Expect(strings.Fields(keys)).To(ContainElements("password", "sasl.jaas.config"))
			} else {
				Expect(strings.Fields(keys)).To(ContainElements("ca.crt", "user.crt", "user.key"))
			}

			got := waitForPhase(ctx, run, v1alpha1.PhaseSucceeded, 15*time.Minute)
			logf("%s Succeeded after %s", run.Name, time.Since(start).Round(time.Second))
			expectResults(ctx, got, v1alpha1.SystemKafka)
			logf("%s", kubectl(nil, "-n", testNS, "get", "benchmarkrun", got.Name, "-o", "wide"))
			p := got.Status.Results.PublishLatencyMs
			logf("%s (TLS, %s): publish p50 %.2f ms, p99 %.2f ms, %.2f MB/s", got.Name, tc.auth, p.P50, p.P99, got.Status.Results.PublishMBPerSec)

			By("the results say how the clients reached the brokers: " + tc.protocol + " with the TLS version negotiated")
			var cm corev1.ConfigMap
			Expect(k8s.Get(ctx, client.ObjectKey{Namespace: testNS, Name: got.Status.ResultsRef}, &cm)).To(Succeed())
			sum, err := results.Read(&cm)
			Expect(err).NotTo(HaveOccurred())
			Expect(sum.Security).NotTo(BeNil(), "summary.json has the security")
			logf("security: %+v", *sum.Security)
			Expect(sum.Security.Protocol).To(Equal(tc.protocol))
			Expect(sum.Security.TLSVersion).To(HavePrefix("TLS 1."))
			Expect(sum.Security.Verification).To(Equal("full"), "the brokers' certificates name the addresses the clients dial")
			if tc.auth == v1alpha1.ManagedAuthScramSHA512 {
				Expect(sum.Security.Mechanism).To(Equal("SCRAM-SHA-512"))
			} else {
				Expect(sum.Security.ClientCertificate).To(BeTrue())
			}

			By("the coordinator read the brokers' settings through the same TLS and credentials")
			d := got.Status.Durability
			Expect(d.AchievedLevel).To(Equal(v1alpha1.Level2), d.Explanation)
			Expect(d.Verification).To(Equal(v1alpha1.Verified), "Kafka %s: %s", d.BrokerVersion, d.Explanation)

			By("kubectl delete leaves no Kafka, KafkaUser, node pool or claim")
			kubectl(nil, "-n", testNS, "delete", "benchmarkrun", got.Name, "--wait=true", "--timeout=5m")
			Eventually(func() string {
				return kubectl(nil, "-n", testNS, "get", "--ignore-not-found", "-o", "name", "kafkas.kafka.strimzi.io/"+cluster, "kafkausers.kafka.strimzi.io/"+user, "secret/"+user) +
					kubectl(nil, "-n", testNS, "get", "-o", "name", "kafkanodepools.kafka.strimzi.io,pvc", "-l", "strimzi.io/cluster="+cluster)
			}).WithTimeout(5 * time.Minute).WithPolling(5 * time.Second).Should(BeEmpty())
			freeLocalDisks(ctx)
			logf("%s: create to clean after %s", run.Name, time.Since(start).Round(time.Second))
		}, SpecTimeout(25*time.Minute))
	}

	It("fails a run whose Kafka Strimzi reports NotReady, with Strimzi's reason", func(ctx SpecContext) {
		run := managedKafkaRun("e2e-strimzi-bad", v1alpha1.Level2, storageClass)
		// A value Strimzi's configuration model of the Kafka refuses (an
		// int setting): the operator reports the Kafka NotReady with
		// InvalidResourceException, which the run fails on at once.
		run.Spec.Cluster.Managed.BrokerConfig = map[string]string{"num.io.threads": "many"}
		applyRun(run)
		got := waitForPhase(ctx, run, v1alpha1.PhaseFailed, 5*time.Minute)
		Expect(got.Status.Message).To(ContainSubstring("the Strimzi cluster operator could not deploy it"))
		Expect(got.Status.Message).To(ContainSubstring("num.io.threads"))
		logf("status.message: %s", got.Status.Message)
		Eventually(func() string {
			return kubectl(nil, "-n", testNS, "get", "--ignore-not-found", "-o", "name", "kafkas.kafka.strimzi.io", strimzi.ClusterName(got))
		}).WithTimeout(2*time.Minute).WithPolling(5*time.Second).Should(BeEmpty(), "teardown removes the Kafka of a failed run")
	}, SpecTimeout(10*time.Minute))

	It("fails at once a run pinned to a Kafka the installed Strimzi does not deploy, naming the versions it does", func(ctx SpecContext) {
		run := managedKafkaRun("e2e-strimzi-version", v1alpha1.Level2, storageClass)
		// A version no Strimzi of this era deploys; Strimzi 1.2.0's
		// install files list 4.2.0 to 4.3.1 (STRIMZI_KAFKA_IMAGES).
		run.Spec.Cluster.Managed.Version = "3.0.0"
		applyRun(run)
		got := waitForPhase(ctx, run, v1alpha1.PhaseFailed, 2*time.Minute)
		Expect(got.Status.Message).To(ContainSubstring("spec.cluster.managed.version 3.0.0"))
		Expect(got.Status.Message).To(And(ContainSubstring("4.2.0"), ContainSubstring("4.3.1"), ContainSubstring("namespace "+testNS)))
		c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionBrokerVersionResolved)
		Expect(c).NotTo(BeNil())
		Expect(c.Status).To(Equal(metav1.ConditionFalse))
		logf("status.message: %s", got.Status.Message)
		Expect(kubectl(nil, "-n", testNS, "get", "--ignore-not-found", "-o", "name", "kafkas.kafka.strimzi.io", strimzi.ClusterName(got))).
			To(BeEmpty(), "nothing was deployed")
	}, SpecTimeout(10*time.Minute))
})

// halfAMinute is the measured phase of the one-broker and one-bookie
// specs (managedKafkaRun, managedPulsarRun) instead of the overlay's
// minute: they test what a run adds to the brokers (security, failures),
// which half a minute of 200 msg/s shows as well, and the e2e suite is
// on CI's critical path (three such specs: about 90 s).
const halfAMinute = 0.5

// managedKafkaRun is run-ack2-async of config/samples-small (smallSample)
// with one broker instead of three, a replication factor of 1 acknowledged
// by it at the level asked (a level's own replication factor is 3): the
// one-broker specs test what a run adds to a broker (security, failures),
// not the replication, and one broker keeps them short beside the other
// specs on this machine, as does a measured phase of halfAMinute.
func managedKafkaRun(prefix string, level v1alpha1.Level, storageClass string) *v1alpha1.BenchmarkRun {
	run := smallSample("run-ack2-async", prefix, storageClass, "")
	run.Spec.Cluster.Managed.Brokers = 1
	run.Spec.Workload.TestDurationMinutes = ptr.To(halfAMinute)
	local := v1alpha1.LocalAsync
	if level == v1alpha1.Level1 {
		local = v1alpha1.LocalSync
	}
	run.Spec.Durability = &v1alpha1.DurabilitySpec{
		Replication: &v1alpha1.ReplicationDurability{Replicas: 1, AckReplicas: 1, Mode: v1alpha1.ReplicationSync},
		Local:       &v1alpha1.LocalDurability{Mode: local},
	}
	return run
}

// threeNodeKafkaRun is run-ack2-async of config/samples-small as a user
// applies it (smallSample): three brokers under the sample's placement
// (node pool streaming, its toleration), one per node (the node pool's
// required anti-affinity), two JBOD disks of 2Gi each, a memory request of
// 1Gi and a CPU request of 200m per broker (config/samples-small/kafka.yaml
// says why not none), the overlay's one-minute workload over 3 partitions,
// at level (the sample's 2: replication factor 3, min.insync.replicas 2,
// acks=all; level 1 adds flush.messages=1).
func threeNodeKafkaRun(prefix string, level v1alpha1.Level, storageClass string) *v1alpha1.BenchmarkRun {
	run := smallSampleAtLevel("run-ack2-async", prefix, level, storageClass, "")
	Expect(run.Spec.Cluster.Managed.Brokers).To(Equal(int32(3)), "the sample's brokers")
	return run
}

// smallSampleAtLevel is smallSample of a sample written at level 2, at
// level: the specs run each three-node sample at its own level and at
// level 1.
func smallSampleAtLevel(name, prefix string, level v1alpha1.Level, storageClass, metadataClass string) *v1alpha1.BenchmarkRun {
	run := smallSample(name, prefix, storageClass, metadataClass)
	Expect(run.Spec.Durability).NotTo(BeNil())
	Expect(run.Spec.Durability.Level).To(Equal(ptr.To(v1alpha1.Level2)), "%s's level", name)
	run.Spec.Durability.Level = ptr.To(level)
	return run
}

// smallSamples is config/samples-small as `kubectl kustomize` renders it,
// once per process.
var smallSamples = sync.OnceValues(func() (map[string][]byte, error) { return renderSmallSamples(repoRoot) })

// smallSample is the run name of config/samples-small, rendered from the
// overlay as a user applies it (`kubectl apply -k`), as a run of the test
// namespace named prefix-<n>. Its sizes, disks, workload and placement are
// the overlay's; smallSample changes only what this test environment
// alone needs, each for a reason of its own:
//   - the disks' StorageClass: storageClass (and metadataClass for
//     Pulsar's ZooKeeper) instead of local-nvme, since the specs of
//     parallel processes each get disks of a class of their own
//     (ownDiskClass) so that none binds or wipes another's, and kind has a
//     default class whose provisioner makes the volumes ("": that class);
//   - the workers' CPU request: 25m instead of the overlay's 250m, as
//     e2eWorkers says (several runs at once on one 2-core machine);
//   - a 15-minute provisioning timeout: the first run of a process waits
//     for images to be imported or pulled beside the other processes' runs.
func smallSample(name, prefix, storageClass, metadataClass string) *v1alpha1.BenchmarkRun {
	docs, err := smallSamples()
	Expect(err).NotTo(HaveOccurred())
	doc, ok := docs[name]
	Expect(ok).To(BeTrue(), "%s has no run %s", smallSamplesDir, name)
	run, err := decodeSample(name, doc)
	Expect(err).NotTo(HaveOccurred())
	run.Name = fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()%100000)
	run.Namespace = testNS
	m := run.Spec.Cluster.Managed
	Expect(m).NotTo(BeNil(), "%s is a managed run", name)
	for _, v := range []*v1alpha1.VolumeSpec{&m.Storage.Data, &m.Storage.Journal, &m.Storage.Ledgers} {
		withClass(v, storageClass)
	}
	for i := range m.Storage.AdditionalData {
		withClass(&m.Storage.AdditionalData[i], storageClass)
	}
	if run.Spec.System == v1alpha1.SystemPulsar {
		withClass(&m.Storage.MetadataStore, metadataClass)
	}
	run.Spec.Workers.Resources.Requests[corev1.ResourceCPU] = e2eWorkers().Resources.Requests[corev1.ResourceCPU]
	run.Spec.Timeouts = v1alpha1.TimeoutsSpec{Provisioning: &metav1.Duration{Duration: 15 * time.Minute}}
	return run
}

// withClass puts a volume the sample sizes on class ("": the cluster's
// default); a volume the sample does not ask for stays unset.
func withClass(v *v1alpha1.VolumeSpec, class string) {
	if v.Size == nil {
		return
	}
	v.StorageClassName = nil
	if class != "" {
		v.StorageClassName = ptr.To(class)
	}
}

// applyRun is `kubectl apply -f` of the run, as a user applies a sample.
func applyRun(run *v1alpha1.BenchmarkRun) {
	run.APIVersion, run.Kind = v1alpha1.GroupVersion.String(), "BenchmarkRun"
	out, err := yaml.Marshal(run)
	Expect(err).NotTo(HaveOccurred())
	// As a user would, with edit in the namespace and nothing more
	// (tenancy_test.go).
	logf("%s", kubectl(out, "apply", "--as="+tenantUser, "-f", "-"))
}

// teardownOnFailure deletes run and frees the local disks when its spec
// fails before its own teardown checks: the managed containers go on after
// a failed spec (ContinueOnFailure), so that one CI run reports every
// failure, and the next spec must find the disks free. A spec that passes
// has deleted its run and checked what that left itself.
func teardownOnFailure(run *v1alpha1.BenchmarkRun) {
	DeferCleanup(func(ctx SpecContext) {
		if !CurrentSpecReport().Failed() {
			return
		}
		if _, err := kubectlE(nil, "-n", testNS, "delete", "benchmarkrun", run.Name, "--ignore-not-found", "--wait=true", "--timeout=5m"); err != nil {
			logf("after the failure, deleting %s: %v", run.Name, err)
		}
		freeLocalDisks(ctx)
	}, NodeTimeout(10*time.Minute))
}

// strimziNamespaceRE is the namespace Strimzi's install files bind their
// roles in (myproject), which its documentation says to replace.
var strimziNamespaceRE = regexp.MustCompile(`(?m)^(\s*)namespace: .*$`)

// strimziFiles are Strimzi's install files for namespace ns, as its
// documentation installs them: every `namespace:` set to ns.
func strimziFiles(dir, ns string) []byte {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	Expect(err).NotTo(HaveOccurred())
	Expect(files).NotTo(BeEmpty(), "no *.yaml in %s", dir)
	var all []string
	for _, f := range files {
		raw, err := os.ReadFile(f)
		Expect(err).NotTo(HaveOccurred())
		all = append(all, strimziNamespaceRE.ReplaceAllString(string(raw), "${1}namespace: "+ns))
	}
	return []byte(strings.Join(all, "\n---\n"))
}

func installStrimzi(dir, ns string) {
	kubectl(strimziFiles(dir, ns), "-n", ns, "create", "-f", "-")
}

// uninstallStrimzi removes the operator and its cluster-wide objects; the
// CRDs go too, so a later install starts from its own. It waits until
// they are gone: README's spec creates Strimzi 1.2.0's objects of the same
// names next, and a CRD still terminating refuses its create.
func uninstallStrimzi(dir, ns string) {
	if out, err := kubectlE(strimziFiles(dir, ns), "-n", ns, "delete", "-f", "-", "--ignore-not-found", "--wait=true", "--timeout=3m"); err != nil {
		logf("removing Strimzi: %v %s", err, out)
	}
}

// strimziOperatorImage is the image Strimzi's install files in dir deploy
// the cluster operator from (quay.io/strimzi/operator:1.2.0, as
// hack/images/strimzi.sh builds it or kind pulls it).
func strimziOperatorImage(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "060-Deployment-strimzi-cluster-operator.yaml"))
	Expect(err).NotTo(HaveOccurred(), "Strimzi's install files in %s", dir)
	m := regexp.MustCompile(`(?m)^\s+image:\s*(\S+)`).FindSubmatch(b)
	Expect(m).NotTo(BeNil(), "%s/060-Deployment-strimzi-cluster-operator.yaml names no image", dir)
	return string(m[1])
}
