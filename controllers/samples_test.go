package controllers

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/provision/envelope"
	"github.com/streambench/streambench-operator/internal/provision/probe"
	"github.com/streambench/streambench-operator/internal/provision/pulsar"
	"github.com/streambench/streambench-operator/internal/provision/strimzi"
)

var _ = Describe("config/samples", func() {
	files, err := filepath.Glob(filepath.Join("..", "config", "samples", "*.yaml"))
	if err != nil || len(files) == 0 {
		Fail("no samples found in config/samples")
	}
	for _, file := range files {
		if filepath.Base(file) == "kustomization.yaml" || strings.HasPrefix(filepath.Base(file), "suite-") {
			continue // suites: see "config/samples suites"
		}
		It("creates "+filepath.Base(file)+" and the controller resolves its durability", func() {
			data, err := os.ReadFile(file)
			Expect(err).NotTo(HaveOccurred())
			var run v1alpha1.BenchmarkRun
			Expect(yaml.UnmarshalStrict(data, &run)).To(Succeed(), "the sample must use only fields of the API")
			run.Namespace = newNamespace()
			Expect(k8sClient.Create(ctx, &run)).To(Succeed())

			var got v1alpha1.BenchmarkRun
			key := types.NamespacedName{Namespace: run.Namespace, Name: run.Name}
			Eventually(func(g Gomega) {
				g.Expect(k8sClient.Get(ctx, key, &got)).To(Succeed())
				g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, v1alpha1.ConditionDurabilityResolved)).To(BeTrue())
			}).Should(Succeed())
			Expect(got.Status.Durability).NotTo(BeNil())
			Expect(got.Status.Durability.AchievedLevel).To(BeNumerically(">=", 1))
			// The API server filled the defaults the sample left out.
			Expect(got.Spec.Workload.KeyDistributor).To(Equal(v1alpha1.KeyNone))
			Expect(got.Spec.Teardown.Policy).NotTo(BeEmpty())
			Expect(got.Spec.Timeouts.Provisioning).NotTo(BeNil())
		})
	}
})

// What a Pulsar sample's comment says its Kafka twin gets is what the
// twin asks for and what the twin's own comment says status.durability
// reports (two comments once said level 4 and 2 where the twins said 3
// and 1, after the sync-delay experiment moved them).
var _ = Describe("config/samples twins", func() {
	gets := regexp.MustCompile(`Kafka\s+twin\s+(?:\(([a-z0-9-]+\.yaml)\)\s+)?gets\s+level\s+(\d)`)
	reports := regexp.MustCompile(`status\.durability\s+reports\s+level\s+(\d)`)
	files, _ := filepath.Glob(filepath.Join("..", "config", "samples", "run-*-pulsar.yaml"))
	for _, file := range files {
		It("says of "+filepath.Base(file)+"'s Kafka twin the level the twin gets", func() {
			data, err := os.ReadFile(file)
			Expect(err).NotTo(HaveOccurred())
			m := gets.FindSubmatch(data)
			if m == nil {
				Expect(string(data)).NotTo(MatchRegexp(`Kafka\s+twin\s+gets`), "a claim this test cannot read")
				return
			}
			twinName := strings.TrimSuffix(filepath.Base(file), "-pulsar.yaml") + ".yaml"
			if len(m[1]) > 0 {
				Expect(string(m[1])).To(Equal(twinName), "the twin named")
			}
			twinData, err := os.ReadFile(filepath.Join("..", "config", "samples", twinName))
			Expect(err).NotTo(HaveOccurred())
			var twin v1alpha1.BenchmarkRun
			Expect(yaml.Unmarshal(twinData, &twin)).To(Succeed())
			Expect(twin.Spec.System).To(Equal(v1alpha1.SystemKafka))
			level := string(m[2])
			Expect(twin.Spec.Durability).NotTo(BeNil())
			Expect(twin.Spec.Durability.Level).NotTo(BeNil(), "%s asks for a level", twinName)
			Expect(strconv.Itoa(int(*twin.Spec.Durability.Level))).To(Equal(level), "%s asks for level %d", twinName, *twin.Spec.Durability.Level)
			r := reports.FindSubmatch(twinData)
			Expect(r).NotTo(BeNil(), "%s's comment says which level status.durability reports", twinName)
			Expect(string(r[1])).To(Equal(level), "%s's comment", twinName)
		})
	}
})

// The twins of the durability matrix run on the same ground: the same node
// pool and tolerations, the same StorageClass, and as many data disks per
// Kafka broker as a bookie has (journal + ledgers).
// envelopePart is replicas pods of one envelope.
type envelopePart struct {
	n int32
	e envelope.Envelope
}

// envelopeTotal is the sum over the parts of a resource's request, or
// limit, in milli-units.
func envelopeTotal(parts []envelopePart, name corev1.ResourceName, limit bool) int64 {
	var sum int64
	for _, x := range parts {
		list := x.e.Resources.Requests
		if limit {
			list = x.e.Resources.Limits
		}
		q := list[name]
		sum += int64(x.n) * q.MilliValue()
	}
	return sum
}

var _ = Describe("config/samples twins", func() {
	read := func(name string) *v1alpha1.BenchmarkRun {
		data, err := os.ReadFile(filepath.Join("..", "config", "samples", name))
		Expect(err).NotTo(HaveOccurred())
		var run v1alpha1.BenchmarkRun
		Expect(yaml.UnmarshalStrict(data, &run)).To(Succeed())
		return &run
	}
	for _, kafka := range []string{"run-ack2-async", "run-ack2-sync", "run-ack1-async", "run-ack1-sync"} {
		It("places "+kafka+" and its Pulsar twins on the same node pool, StorageClass and number of disks", func() {
			k := read(kafka + ".yaml").Spec.Cluster.Managed
			twins := []string{kafka + "-pulsar.yaml"}
			if kafka == "run-ack2-async" {
				twins = append(twins, "run-ack2-bypass-pulsar.yaml")
			}
			for _, twin := range twins {
				p := read(twin).Spec.Cluster.Managed
				Expect(p.Placement.NodeSelector).To(Equal(k.Placement.NodeSelector), twin)
				Expect(p.Placement.Tolerations).To(Equal(k.Placement.Tolerations), twin)
				kafkaClasses := []string{*k.Storage.Data.StorageClassName}
				for _, v := range k.Storage.AdditionalData {
					kafkaClasses = append(kafkaClasses, *v.StorageClassName)
				}
				Expect(kafkaClasses).To(Equal([]string{*p.Storage.Journal.StorageClassName, *p.Storage.Ledgers.StorageClassName}), twin)

				By("giving " + twin + " the same CPU and memory envelope: Kafka's brokers against Pulsar's bookies and brokers")
				kEnv, pEnv := strimzi.BrokerEnvelope(k), pulsar.EnvelopesOf(p)
				kafkaPath := []envelopePart{{k.BrokersOrDefault(), kEnv}}
				pulsarPath := []envelopePart{{p.BookiesOrDefault(), pEnv.Bookie}, {p.BrokersOrDefault(), pEnv.Broker}}
				Expect(envelopeTotal(pulsarPath, corev1.ResourceCPU, false)).To(Equal(envelopeTotal(kafkaPath, corev1.ResourceCPU, false)), twin+": CPU requests")
				Expect(envelopeTotal(pulsarPath, corev1.ResourceMemory, true)).To(Equal(envelopeTotal(kafkaPath, corev1.ResourceMemory, true)), twin+": memory limits")
				Expect(pEnv.Bookie.Resources.Limits).To(HaveKey(corev1.ResourceMemory), twin+": the bookies' page cache is bounded")
			}
		})
	}

	It("gives the broker-failure sample a Pulsar twin that tolerates the same loss, hit at the same time, in the same envelope", func() {
		tolerance := func(name string) (durability.Tolerance, *v1alpha1.BenchmarkRun) {
			run := read(name)
			eff, err := durability.Translate(run.Spec.System, *run.Spec.Durability)
			Expect(err).NotTo(HaveOccurred(), name)
			tol, ok := durability.ToleranceOf(eff, probe.TopologyOf(run))
			Expect(ok).To(BeTrue(), name)
			return tol, run
		}
		k, kRun := tolerance("run-ack2-async-broker-failure.yaml")
		p, pRun := tolerance("run-ack2-async-pulsar-bookie-failure.yaml")
		Expect(p.Losses).To(Equal(k.Losses), "Kafka: %s; Pulsar: %s", k.Description, p.Description)
		Expect(p.Losses).To(Equal(int32(1)))
		Expect(pRun.Spec.Faults).To(HaveLen(1))
		Expect(pRun.Spec.Faults[0].At).To(Equal(kRun.Spec.Faults[0].At))
		Expect(pRun.Spec.Faults[0].Action).To(Equal(kRun.Spec.Faults[0].Action))
		Expect(pRun.Spec.Faults[0].Target).To(Equal(v1alpha1.FaultTarget("bookie-1")))
		// Without the setting, the same Pulsar run tolerates none.
		delete(pRun.Spec.Cluster.Managed.BrokerConfig, durability.PulsarBrokerDelayEnsembleChange)
		eff, err := durability.Translate(pRun.Spec.System, *pRun.Spec.Durability)
		Expect(err).NotTo(HaveOccurred())
		none, _ := durability.ToleranceOf(eff, probe.TopologyOf(pRun))
		Expect(none.Losses).To(Equal(int32(0)))
		base := read("run-ack2-async-pulsar.yaml")
		Expect(pRun.Spec.Cluster.Managed.Resources).To(Equal(base.Spec.Cluster.Managed.Resources), "the envelope of run-ack2-async-pulsar, run-ack2-async's twin")
		Expect(pRun.Spec.Workload).To(Equal(kRun.Spec.Workload))
	})

	It("has the journal-bypass Pulsar sample, the study's key configuration", func() {
		d := read("run-ack2-bypass-pulsar.yaml").Spec.Durability
		Expect(d.Local.Journal).To(Equal(v1alpha1.JournalBypass))
		Expect(d.Replication.AckReplicas).To(Equal(int32(2)))
	})
})

// The suite samples: the API server takes them, and the controller plans
// the study's matrix from the library's own workload files.
var _ = Describe("config/samples suites", func() {
	read := func(name string) *v1alpha1.BenchmarkSuite {
		data, err := os.ReadFile(filepath.Join("..", "config", "samples", name))
		Expect(err).NotTo(HaveOccurred())
		var s v1alpha1.BenchmarkSuite
		Expect(yaml.UnmarshalStrict(data, &s)).To(Succeed(), "the sample must use only fields of the API")
		return &s
	}

	It("plans suite-durability-matrix.yaml: 18 cells, one Kafka cluster, a Pulsar cluster per journal setting, the matched twin on the async one", func() {
		ns := newNamespace()
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "suite-workloads", Namespace: ns}, Data: map[string]string{}}
		for _, f := range []string{"max-rate-1-topic-100-partitions-1kb-2p-2c.yaml", "latency-1-topic-100-partitions-1kb.yaml"} {
			data, err := os.ReadFile(filepath.Join("..", "workloads", f))
			Expect(err).NotTo(HaveOccurred())
			cm.Data[f] = string(data)
		}
		Expect(k8sClient.Create(ctx, cm)).To(Succeed())
		s := read("suite-durability-matrix.yaml")
		s.Namespace = ns
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		var got v1alpha1.BenchmarkSuite
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: s.Name}, &got)).To(Succeed())
			g.Expect(got.Status.Cells).To(HaveLen(18), "status.message: %s", got.Status.Message)
		}).Should(Succeed())
		var clusters []string
		for _, c := range got.Status.Clusters {
			clusters = append(clusters, c.Name)
		}
		Expect(clusters).To(Equal([]string{"matrix-kafka", "matrix-pulsar-jsync", "matrix-pulsar-jasync"}))
		// The matched twin: Kafka's level 2 waits for 3 of 3 replicas, so
		// does this cell; the study's level-2 pair waits for 2 of 3.
		var twins []string
		for _, c := range got.Status.Cells {
			if strings.Contains(c.Name, "-l2-r33-") {
				twins = append(twins, c.Name+" on "+c.Cluster)
			}
		}
		Expect(twins).To(ConsistOf("matrix-pulsar-l2-r33-maxtput on matrix-pulsar-jasync", "matrix-pulsar-l2-r33-lat200k on matrix-pulsar-jasync"))
		Expect(got.Status.Workloads[0].Spec.ProducerRate).To(BeZero(), "maxtput searches the maximum rate")
		Expect(got.Status.Workloads[1].Spec.ProducerRate).To(Equal(int64(200000)))
		Expect(got.Status.Progress).To(HaveSuffix("/18"))
		// Delete it: no Strimzi here, and nothing should be left running.
		Expect(k8sClient.Delete(ctx, &got)).To(Succeed())
	})

	It("gives suite-durability-matrix.yaml's Pulsar the failure tolerance of its Kafka at every level", func() {
		s := read("suite-durability-matrix.yaml")
		tolerance := func(sys v1alpha1.SuiteSystem, d v1alpha1.DurabilitySpec) durability.Tolerance {
			run := &v1alpha1.BenchmarkRun{Spec: v1alpha1.BenchmarkRunSpec{System: sys.System, Cluster: sys.Cluster}}
			eff, err := durability.Translate(sys.System, d)
			Expect(err).NotTo(HaveOccurred())
			tol, ok := durability.ToleranceOf(eff, probe.TopologyOf(run))
			Expect(ok).To(BeTrue())
			return tol
		}
		kafka, pulsar := s.Spec.Systems[0], s.Spec.Systems[1]
		Expect(kafka.System).To(Equal(v1alpha1.SystemKafka))
		compared := 0
		for _, d := range pulsar.Durabilities {
			if d.Level == nil {
				continue
			}
			for _, kd := range kafka.Durabilities {
				if kd.Level != nil && *kd.Level == *d.Level {
					k, p := tolerance(kafka, kd), tolerance(pulsar, d)
					Expect(p.Losses).To(Equal(k.Losses), "level %d: Kafka %s; Pulsar %s", *d.Level, k.Description, p.Description)
					compared++
				}
			}
		}
		Expect(compared).To(Equal(4))
	})

	It("plans suite-security-cost.yaml: a Kafka per security setting, a cell on each", func() {
		ns := newNamespace()
		s := read("suite-security-cost.yaml")
		s.Namespace = ns
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		var got v1alpha1.BenchmarkSuite
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: s.Name}, &got)).To(Succeed())
			g.Expect(got.Status.Cells).To(HaveLen(3), "status.message: %s", got.Status.Message)
		}).Should(Succeed())
		var clusters, cells []string
		for _, c := range got.Status.Clusters {
			clusters = append(clusters, c.Name+" "+c.Security.Label())
		}
		for _, c := range got.Status.Cells {
			cells = append(cells, c.Name+" "+c.Security)
		}
		Expect(clusters).To(Equal([]string{"security-cost-kafka-plain plain", "security-cost-kafka-tls tls", "security-cost-kafka-tls-scram tls-scram"}))
		// The names fit without a hash: the sample's are readable.
		Expect(cells).To(Equal([]string{"security-cost-kafka-plain-l2-lat2k plain", "security-cost-kafka-tls-l2-lat2k tls", "security-cost-kafka-tls-scram-l2-lat2k tls-scram"}))
		Expect(k8sClient.Delete(ctx, &got)).To(Succeed())
	})

	It("accepts suite-durability-matrix-local.yaml", func() {
		s := read("suite-durability-matrix-local.yaml")
		s.Namespace = newNamespace()
		s.Spec.Systems = s.Spec.Systems[:1]
		s.Spec.Systems[0].Cluster = v1alpha1.ClusterSpec{Existing: &v1alpha1.ExistingCluster{BootstrapServers: "kafka.example:9092"}}
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
	})
})
