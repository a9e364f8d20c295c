// Package strimzi computes the Strimzi objects of a managed Kafka run and
// reads their readiness. It makes no API calls: every function is a pure
// function from a BenchmarkRun (and its translated durability) to objects,
// or from an object read by the controller to a verdict.
//
// What a managed Kafka run deploys, all in the run's namespace:
//
//   - a Kafka named ClusterName(run) with one internal listener: plain
//     (9092, no TLS), or as spec.cluster.managed.security asks, tls (9093,
//     Strimzi's cluster CA) and SCRAM-SHA-512 or client certificates; the
//     durability translation's broker settings overlaid by
//     spec.cluster.managed.brokerConfig; JMX Prometheus metrics read from
//     the metrics ConfigMap; and, when the clients authenticate, an entity
//     operator running the User Operator alone;
//   - when the clients authenticate, a KafkaUser (UserName(run)) of that
//     type, whose Secret the User Operator writes and the clients read;
//   - one KafkaNodePool (PoolName(run)) whose nodes are both KRaft
//     controllers and brokers, with the run's replicas, storage,
//     resources and placement, and a required pod anti-affinity that
//     keeps two brokers off one node (Strimzi adds none);
//   - the metrics ConfigMap (MetricsConfigMapName(run)).
//
// Objects are unstructured because Strimzi 1.x serves only
// kafka.strimzi.io/v1 and publishes no Go types. The builders fill small
// private structs that mirror just the fields streambench sets (written
// from Strimzi's documented schema, not generated from its Java model),
// then convert them with runtime.DefaultUnstructuredConverter. The structs
// give compile-time field names and JSON tags; the converter guarantees
// the maps hold only JSON values (int64, string, ...) that
// unstructured.Unstructured can deep-copy, which hand-built maps get wrong
// easily (an int or a []string makes DeepCopy panic). Corev1 types
// (affinity, tolerations, resources) are embedded as they are, since
// Strimzi uses the Kubernetes schema for them.
//
// No builder sets owner references: the controller sets them with
// controllerutil.SetControllerReference, so that garbage collection
// removes the cluster with its run and the builders stay free of a scheme.
package strimzi
