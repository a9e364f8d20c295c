package strimzi

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// MetricsConfigKey is the key of the exporter rules in the metrics
// ConfigMap. Strimzi serves the metrics on port 9404 (tcp-prometheus).
const MetricsConfigKey = "kafka-metrics-config.yml"

// metricsRules is the JMX Prometheus exporter configuration of the
// brokers. The exporter applies the first matching rule and drops every
// attribute no rule matches (JVM metrics are exported regardless), so the
// set below is what a benchmark needs and no more: throughput, where
// produce and fetch time goes, what fsyncs cost, whether replication keeps
// up, and how busy the broker's threads are.
//
// Rules match "domain<key=value, ...><>Attribute: value", with keys in
// the order Kafka registers them (type, name, then tags). The patterns
// avoid look-arounds so the tests can check them with Go's regexp, which
// agrees with Java's on this subset.
//
// includeObjectNames names the MBeans the rules read, so a scrape walks
// those and no others: the exporter otherwise evaluates every rule against
// every MBean of the broker (thousands, per partition and per client) on
// each scrape, which took seconds of the broker's CPU on a busy 2-core
// machine — time the benchmark's broker did not get, and scrapes that ran
// past Prometheus's timeout under load, leaving a run without broker
// figures. The JVM's own metrics (jvm_*, process_*) are not MBeans of
// these queries and are exported regardless.
const metricsRules = `lowercaseOutputName: true
includeObjectNames:
- "kafka.server:type=BrokerTopicMetrics,*"
- "kafka.network:type=RequestMetrics,request=Produce,*"
- "kafka.network:type=RequestMetrics,request=FetchConsumer,*"
- "kafka.network:type=RequestMetrics,request=FetchFollower,*"
- "kafka.log:type=LogFlushStats,*"
- "kafka.server:type=DelayedOperationPurgatory,*"
- "kafka.server:type=ReplicaManager,*"
- "kafka.server:type=KafkaRequestHandlerPool,*"
- "kafka.network:type=SocketServer,*"
- "kafka.controller:type=KafkaController,*"
rules:
# Throughput, per topic and broker-wide (BrokerTopicMetrics meters; the
# Count attribute is a monotonic counter, rate() gives the throughput).
- pattern: "kafka.server<type=BrokerTopicMetrics, name=(MessagesIn|BytesIn|BytesOut|BytesRejected|TotalProduceRequests|TotalFetchRequests|FailedProduceRequests|FailedFetchRequests)PerSec, topic=(.+)><>Count"
  name: kafka_server_brokertopicmetrics_$1_total
  type: COUNTER
  labels:
    topic: "$2"
- pattern: "kafka.server<type=BrokerTopicMetrics, name=(MessagesIn|BytesIn|BytesOut|BytesRejected|ReplicationBytesIn|ReplicationBytesOut|TotalProduceRequests|TotalFetchRequests|FailedProduceRequests|FailedFetchRequests)PerSec><>Count"
  name: kafka_server_brokertopicmetrics_$1_total
  type: COUNTER
# Where a request's time goes: queue, local append, remote (waiting for
# followers with acks=all), response. The broker computes the quantiles
# over a decaying sample; the counts give request rates.
- pattern: "kafka.network<type=RequestMetrics, name=(TotalTimeMs|RequestQueueTimeMs|LocalTimeMs|RemoteTimeMs|ThrottleTimeMs|ResponseQueueTimeMs|ResponseSendTimeMs), request=(Produce|FetchConsumer|FetchFollower)><>(50|99|999)thPercentile"
  name: kafka_network_requestmetrics_$1
  type: GAUGE
  labels:
    request: "$2"
    quantile: "0.$3"
- pattern: "kafka.network<type=RequestMetrics, name=(TotalTimeMs|RequestQueueTimeMs|LocalTimeMs|RemoteTimeMs|ThrottleTimeMs|ResponseQueueTimeMs|ResponseSendTimeMs), request=(Produce|FetchConsumer|FetchFollower)><>Mean"
  name: kafka_network_requestmetrics_$1_mean
  type: GAUGE
  labels:
    request: "$2"
- pattern: "kafka.network<type=RequestMetrics, name=TotalTimeMs, request=(Produce|FetchConsumer|FetchFollower)><>Count"
  name: kafka_network_requestmetrics_requests_total
  type: COUNTER
  labels:
    request: "$1"
# Flushes (fsyncs) of the log: how often they run and how long they take.
# With per-message flush (durability level 1 or 3 asked of Kafka) this is
# where the cost shows.
- pattern: "kafka.log<type=LogFlushStats, name=LogFlushRateAndTimeMs><>(50|99|999)thPercentile"
  name: kafka_log_logflushstats_flushtimems
  type: GAUGE
  labels:
    quantile: "0.$1"
- pattern: "kafka.log<type=LogFlushStats, name=LogFlushRateAndTimeMs><>Count"
  name: kafka_log_logflushstats_flushes_total
  type: COUNTER
# Produce requests parked until the followers have the data (acks=all).
- pattern: "kafka.server<type=DelayedOperationPurgatory, name=PurgatorySize, delayedOperation=(Produce|Fetch)><>Value"
  name: kafka_server_delayedoperationpurgatory_size
  type: GAUGE
  labels:
    operation: "$1"
# Replication health: sync replication is only as good as a full ISR.
- pattern: "kafka.server<type=ReplicaManager, name=(UnderReplicatedPartitions|UnderMinIsrPartitionCount|AtMinIsrPartitionCount|OfflineReplicaCount|PartitionCount|LeaderCount)><>Value"
  name: kafka_server_replicamanager_$1
  type: GAUGE
- pattern: "kafka.server<type=ReplicaManager, name=(IsrShrinks|IsrExpands)PerSec><>Count"
  name: kafka_server_replicamanager_$1_total
  type: COUNTER
# Saturation: the share of time request handler and network threads idle
# (1 = idle). The one-minute rate follows a run; the mean since start
# would not.
- pattern: "kafka.server<type=KafkaRequestHandlerPool, name=RequestHandlerAvgIdlePercent><>OneMinuteRate"
  name: kafka_server_requesthandler_idle_ratio
  type: GAUGE
- pattern: "kafka.network<type=SocketServer, name=NetworkProcessorAvgIdlePercent><>Value"
  name: kafka_network_processor_idle_ratio
  type: GAUGE
# The controller quorum: one active controller, no offline partitions.
- pattern: "kafka.controller<type=KafkaController, name=(ActiveControllerCount|OfflinePartitionsCount|GlobalPartitionCount|GlobalTopicCount)><>Value"
  name: kafka_controller_kafkacontroller_$1
  type: GAUGE
`

// MetricsConfigMap builds the ConfigMap the run's Kafka reads its JMX
// Prometheus exporter rules from (spec.kafka.metricsConfig).
func MetricsConfigMap(run *v1alpha1.BenchmarkRun) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:      MetricsConfigMapName(run),
			Namespace: run.Namespace,
			Labels:    labels(run),
		},
		Data: map[string]string{MetricsConfigKey: metricsRules},
	}
}
