package controllers

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// Every validation rule of the CRD, shown rejecting a bad object through the
// real API server with a message that names the field and the fix.
var _ = Describe("BenchmarkRun validation", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	It("accepts the minimal run the table below breaks", func() {
		for _, system := range []v1alpha1.System{v1alpha1.SystemKafka, v1alpha1.SystemPulsar} {
			Expect(k8sClient.Create(ctx, validRun(ns, system))).To(Succeed())
		}
	})

	explicit := func(r *v1alpha1.BenchmarkRun, repl v1alpha1.ReplicationDurability, local v1alpha1.LocalDurability) {
		r.Spec.Durability = &v1alpha1.DurabilitySpec{Replication: &repl, Local: &local}
	}
	existingKafka := func(r *v1alpha1.BenchmarkRun) *v1alpha1.ExistingCluster {
		r.Spec.Cluster = v1alpha1.ClusterSpec{Existing: &v1alpha1.ExistingCluster{}}
		return r.Spec.Cluster.Existing
	}

	// What a Go client cannot write (omitempty drops an empty string; a
	// Duration is always one) but a YAML file can: sent as unstructured.
	DescribeTable("rejects in YAML",
		func(path []string, value string, wantMessage string) {
			obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(validRun(ns, v1alpha1.SystemKafka))
			Expect(err).NotTo(HaveOccurred())
			u := &unstructured.Unstructured{Object: obj}
			u.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("BenchmarkRun"))
			if path[1] == "cluster" {
				Expect(unstructured.SetNestedField(u.Object, map[string]any{}, "spec", "cluster")).To(Succeed())
			}
			Expect(unstructured.SetNestedField(u.Object, value, path...)).To(Succeed())
			err = k8sClient.Create(ctx, u)
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(wantMessage))
		},
		Entry("an existing Kafka with an empty address", []string{"spec", "cluster", "existing", "bootstrapServers"}, "",
			"spec.cluster.existing.bootstrapServers must list host:port addresses separated by commas"),
		Entry("a run timeout that is not a duration", []string{"spec", "timeouts", "run"}, "2 hours",
			"spec.timeouts.run: Invalid value: \"2 hours\": must be a duration such as 90s, 20m or 1h30m"),
		Entry("a provisioning timeout in days", []string{"spec", "timeouts", "provisioning"}, "1d",
			"spec.timeouts.provisioning: Invalid value: \"1d\": must be a duration"),
	)

	// A typo in spec.workload is refused as kubectl sends objects (field
	// validation Strict, kubectl's default); OMB files are copied in by
	// hand, so a misspelt key must not silently fall back to a default.
	It("refuses a misspelt spec.workload key with strict field validation", func() {
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(validRun(ns, v1alpha1.SystemKafka))
		Expect(err).NotTo(HaveOccurred())
		u := &unstructured.Unstructured{Object: obj}
		u.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("BenchmarkRun"))
		Expect(unstructured.SetNestedField(u.Object, int64(5), "spec", "workload", "testDurationMinute")).To(Succeed())
		err = k8sClient.Create(ctx, u, client.FieldValidation("Strict"))
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring(`unknown field "spec.workload.testDurationMinute"`))
	})

	DescribeTable("rejects",
		func(system v1alpha1.System, mutate func(*v1alpha1.BenchmarkRun), wantMessage string) {
			run := validRun(ns, system)
			mutate(run)
			err := k8sClient.Create(ctx, run)
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(wantMessage))
		},
		Entry("an unknown system", v1alpha1.System("rabbitmq"), func(r *v1alpha1.BenchmarkRun) {},
			`spec.system: Unsupported value: "rabbitmq"`),
		Entry("both managed and existing cluster", v1alpha1.SystemKafka, func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Cluster.Existing = &v1alpha1.ExistingCluster{BootstrapServers: "k:9092"}
		}, "spec.cluster: set exactly one of managed (deploy brokers for this run) or existing"),
		Entry("neither managed nor existing cluster", v1alpha1.SystemKafka, func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Cluster = v1alpha1.ClusterSpec{}
		}, "spec.cluster: set exactly one of managed"),
		Entry("ackReplicas above replicas", v1alpha1.SystemKafka, func(r *v1alpha1.BenchmarkRun) {
			explicit(r, v1alpha1.ReplicationDurability{Replicas: 2, AckReplicas: 3, Mode: v1alpha1.ReplicationSync},
				v1alpha1.LocalDurability{Mode: v1alpha1.LocalAsync})
			r.Spec.Cluster.Managed.Brokers = 3
		}, "spec.durability.replication.ackReplicas must not exceed replicas; lower ackReplicas or raise replicas"),
		Entry("sync replication without a majority", v1alpha1.SystemPulsar, func(r *v1alpha1.BenchmarkRun) {
			explicit(r, v1alpha1.ReplicationDurability{Replicas: 3, AckReplicas: 1, Mode: v1alpha1.ReplicationSync},
				v1alpha1.LocalDurability{Mode: v1alpha1.LocalSync})
		}, "mode Sync needs ackReplicas to be a majority of replicas"),
		Entry("level together with explicit settings", v1alpha1.SystemKafka, func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Durability = &v1alpha1.DurabilitySpec{Level: level(2),
				Local: &v1alpha1.LocalDurability{Mode: v1alpha1.LocalAsync}}
		}, "spec.durability: set either level or replication/local, not both"),
		Entry("replication without local", v1alpha1.SystemKafka, func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Durability = &v1alpha1.DurabilitySpec{Replication: &v1alpha1.ReplicationDurability{Mode: v1alpha1.ReplicationSync}}
		}, "spec.durability: set level (1-4), or both replication and local"),
		Entry("a level above 4", v1alpha1.SystemKafka, func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Durability = &v1alpha1.DurabilitySpec{Level: level(5)}
		}, "spec.durability.level: Invalid value: 5: spec.durability.level in body should be less than or equal to 4"),
		Entry("local Sync that bypasses the journal", v1alpha1.SystemPulsar, func(r *v1alpha1.BenchmarkRun) {
			explicit(r, v1alpha1.ReplicationDurability{Mode: v1alpha1.ReplicationSync},
				v1alpha1.LocalDurability{Mode: v1alpha1.LocalSync, Journal: v1alpha1.JournalBypass})
		}, "spec.durability.local: mode Sync needs the journal; remove journal: Bypass or use mode Async"),
		Entry("a flush interval with local Sync", v1alpha1.SystemPulsar, func(r *v1alpha1.BenchmarkRun) {
			ms := int32(100)
			explicit(r, v1alpha1.ReplicationDurability{Mode: v1alpha1.ReplicationSync},
				v1alpha1.LocalDurability{Mode: v1alpha1.LocalSync, FlushIntervalMs: &ms})
		}, "spec.durability.local.flushIntervalMs applies to mode Async only"),
		Entry("a flush interval with the journal bypassed", v1alpha1.SystemPulsar, func(r *v1alpha1.BenchmarkRun) {
			ms := int32(100)
			explicit(r, v1alpha1.ReplicationDurability{Mode: v1alpha1.ReplicationSync},
				v1alpha1.LocalDurability{Mode: v1alpha1.LocalAsync, Journal: v1alpha1.JournalBypass, FlushIntervalMs: &ms})
		}, "spec.durability.local.flushIntervalMs has no journal to flush with journal: Bypass"),
		Entry("a non-positive message size", v1alpha1.SystemKafka, func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Workload.MessageSize = 0
		}, "spec.workload.messageSize: Invalid value: 0: spec.workload.messageSize in body should be greater than or equal to 32"),
		// The worker refused these only at run time: every message carries
		// a 32-byte header.
		Entry("a message smaller than its header", v1alpha1.SystemKafka, func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Workload.MessageSize = 16
		}, "spec.workload.messageSize in body should be greater than or equal to 32"),
		Entry("a message larger than 16 MiB", v1alpha1.SystemKafka, func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Workload.MessageSize = 64 << 20
		}, "spec.workload.messageSize in body should be less than or equal to 16777216"),
		Entry("a payload pool a worker cannot hold", v1alpha1.SystemKafka, func(r *v1alpha1.BenchmarkRun) {
			pool := int32(100000)
			r.Spec.Workload.MessageSize = 1 << 20
			r.Spec.Workload.UseRandomizedPayloads = true
			r.Spec.Workload.RandomizedPayloadPoolSize = &pool
		}, "spec.workload.randomizedPayloadPoolSize x messageSize must be at most 256 MiB"),
		Entry("an existing Kafka address without a port", v1alpha1.SystemKafka, func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Cluster = v1alpha1.ClusterSpec{Existing: &v1alpha1.ExistingCluster{BootstrapServers: "my-kafka"}}
		}, "spec.cluster.existing.bootstrapServers must list host:port addresses separated by commas"),

		Entry("a backlog with the maximum-rate search", v1alpha1.SystemKafka, func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Workload.ProducerRate = 0
			r.Spec.Workload.ConsumerBacklogSizeGB = float(100)
		}, "spec.workload.consumerBacklogSizeGB needs a fixed producerRate (> 0)"),
		Entry("a mixed workload without a backlog", v1alpha1.SystemPulsar, func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Workload.Mixed = &v1alpha1.MixedWorkload{CatchUpSubscriptionsPerTopic: 1}
		}, "spec.workload.mixed needs consumerBacklogSizeGB > 0"),
		Entry("spec.payload without a payloadFile", v1alpha1.SystemKafka, func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Payload = &v1alpha1.PayloadSpec{ConfigMapRef: v1alpha1.ConfigMapFileRef{Name: "omb-payload"}}
		}, "spec.payload gives the bytes of spec.workload.payloadFile, which is not set; set payloadFile or remove spec.payload"),
		Entry("a threshold with both max and min", v1alpha1.SystemKafka, func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Thresholds = []v1alpha1.Threshold{{Figure: "publishLatencyMs.p99", Max: float(10), Min: float(1)}}
		}, "a threshold sets exactly one of max (the figure must be at most this) or min (at least this)"),
		Entry("a threshold on a figure the results do not have", v1alpha1.SystemKafka, func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Thresholds = []v1alpha1.Threshold{{Figure: "publishLatencyMs.p90", Max: float(10)}}
		}, `spec.thresholds[0].figure: Unsupported value: "publishLatencyMs.p90"`),
		Entry("an end-to-end threshold on a produce-only run", v1alpha1.SystemKafka, func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Workload.SubscriptionsPerTopic = ptr.To[int32](0)
			r.Spec.Thresholds = []v1alpha1.Threshold{{Figure: "endToEndLatencyMs.p99", Max: float(10)}}
		}, "spec.thresholds bounds an end-to-end or consume figure, but spec.workload.subscriptionsPerTopic is 0"),
		Entry("a zero test duration", v1alpha1.SystemKafka, func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Workload.TestDurationMinutes = float(0)
		}, "spec.workload.testDurationMinutes"),
		Entry("a drain ratio above 1", v1alpha1.SystemKafka, func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Workload.BacklogDrainRatio = float(1.5)
		}, "spec.workload.backlogDrainRatio: Invalid value: 1.5"),
		Entry("bookies for kafka", v1alpha1.SystemKafka, func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Cluster.Managed.Bookies = 3
		}, "spec.cluster.managed.bookies and metadataStoreReplicas apply to system pulsar only"),
		Entry("fewer kafka brokers than the replication factor", v1alpha1.SystemKafka, func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Cluster.Managed.Brokers = 2
		}, "spec.cluster.managed.brokers must be at least the replication factor"),
		Entry("fewer bookies than the ensemble", v1alpha1.SystemPulsar, func(r *v1alpha1.BenchmarkRun) {
			explicit(r, v1alpha1.ReplicationDurability{Replicas: 5, AckReplicas: 3, Mode: v1alpha1.ReplicationSync},
				v1alpha1.LocalDurability{Mode: v1alpha1.LocalSync})
			r.Spec.Cluster.Managed.Bookies = 4
		}, "spec.cluster.managed.bookies must be at least the ensemble size"),
		Entry("kafka with both bootstrapServers and strimziCluster", v1alpha1.SystemKafka, func(r *v1alpha1.BenchmarkRun) {
			e := existingKafka(r)
			e.BootstrapServers = "k:9092"
			e.StrimziCluster = &v1alpha1.StrimziClusterRef{Name: "my-cluster"}
		}, "spec.cluster.existing: system kafka needs exactly one of bootstrapServers or strimziCluster"),
		Entry("kafka with a pulsar serviceURL", v1alpha1.SystemKafka, func(r *v1alpha1.BenchmarkRun) {
			e := existingKafka(r)
			e.BootstrapServers = "k:9092"
			e.ServiceURL = "pulsar://p:6650"
		}, "spec.cluster.existing.serviceURL and adminURL apply to system pulsar only"),
		Entry("pulsar without an adminURL", v1alpha1.SystemPulsar, func(r *v1alpha1.BenchmarkRun) {
			existingKafka(r).ServiceURL = "pulsar://p:6650"
		}, "spec.cluster.existing: system pulsar needs both serviceURL (pulsar://...) and adminURL (http://...)"),
		Entry("pulsar with kafka bootstrapServers", v1alpha1.SystemPulsar, func(r *v1alpha1.BenchmarkRun) {
			e := existingKafka(r)
			e.ServiceURL, e.AdminURL, e.BootstrapServers = "pulsar://p:6650", "http://p:8080", "k:9092"
		}, "spec.cluster.existing.bootstrapServers and strimziCluster apply to system kafka only"),
		Entry("a serviceURL that is not pulsar://", v1alpha1.SystemPulsar, func(r *v1alpha1.BenchmarkRun) {
			e := existingKafka(r)
			e.ServiceURL, e.AdminURL = "http://p:6650", "http://p:8080"
		}, "spec.cluster.existing.serviceURL: Invalid value"),
		Entry("kafka driver settings on a pulsar run", v1alpha1.SystemPulsar, func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Driver = &v1alpha1.DriverSpec{Kafka: &v1alpha1.KafkaDriver{Producer: map[string]string{"linger.ms": "5"}}}
		}, "spec.driver.kafka is set but spec.system is pulsar; move the settings to spec.driver.pulsar"),
		Entry("pulsar driver settings on a kafka run", v1alpha1.SystemKafka, func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Driver = &v1alpha1.DriverSpec{Pulsar: &v1alpha1.PulsarDriver{Client: map[string]string{"ioThreads": "8"}}}
		}, "spec.driver.pulsar is set but spec.system is kafka; move the settings to spec.driver.kafka"),
		Entry("a producer acks override that would change the durability", v1alpha1.SystemKafka, func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Driver = &v1alpha1.DriverSpec{Kafka: &v1alpha1.KafkaDriver{Producer: map[string]string{"acks": "1"}}}
		}, "spec.driver.kafka.producer.acks is set by spec.durability; remove it and choose the durability level instead"),
		Entry("a topic flush override that would change the durability", v1alpha1.SystemKafka, func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Driver = &v1alpha1.DriverSpec{Kafka: &v1alpha1.KafkaDriver{Topic: map[string]string{"flush.messages": "1"}}}
		}, "spec.driver.kafka.topic: min.insync.replicas, flush.messages, flush.ms and unclean.leader.election.enable are set by spec.durability"),
		Entry("a durability key in brokerConfig", v1alpha1.SystemKafka, func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Cluster.Managed.BrokerConfig = map[string]string{"min.insync.replicas": "1"}
		}, "spec.cluster.managed.brokerConfig must not set durability keys"),
		Entry("a journal key in bookieConfig", v1alpha1.SystemPulsar, func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Cluster.Managed.BookieConfig = map[string]string{"journalSyncData": "false"}
		}, "spec.cluster.managed.bookieConfig must not set the journal keys"),
		Entry("a name too long for the run's Jobs and pods", v1alpha1.SystemKafka, func(r *v1alpha1.BenchmarkRun) {
			r.GenerateName = ""
			r.Name = "a-benchmark-run-whose-name-is-longer-than-forty"
		}, "metadata.name must be at most 40 characters"),
		Entry("zero workers", v1alpha1.SystemKafka, func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Workers.Count = -1
		}, "spec.workers.count: Invalid value: -1"),
	)

	It("keeps the spec immutable and leaves a rejected update's object as it was", func() {
		run := validRun(ns, v1alpha1.SystemKafka)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		key := types.NamespacedName{Namespace: ns, Name: run.Name}

		// The controller updates the run's status meanwhile; retry on a
		// conflict until the API server judges the spec change itself.
		Eventually(func(g Gomega) {
			var changed v1alpha1.BenchmarkRun
			g.Expect(k8sClient.Get(ctx, key, &changed)).To(Succeed())
			changed.Spec.Workload.ProducerRate = 99999
			err := k8sClient.Update(ctx, &changed)
			g.Expect(err).To(HaveOccurred())
			g.Expect(err.Error()).To(ContainSubstring("spec is immutable after creation; to run again, create a new BenchmarkRun"))
		}).Should(Succeed())

		var after v1alpha1.BenchmarkRun
		Expect(k8sClient.Get(ctx, key, &after)).To(Succeed())
		Expect(after.Spec.Workload.ProducerRate).To(Equal(int64(1000)))
		Expect(after.Generation).To(Equal(run.Generation))
	})
})
