// Package monitoringtest holds the end-to-end check of monitoring: a real
// Prometheus (built from its Go module, hack/prometheus-binary.sh) scrapes
// real local brokers (Kafka through the JMX exporter java agent with
// Strimzi's rules; Pulsar's own /metrics) and real workers, and the broker
// figures read back from it are checked against what is known without
// it. It has no code of its own; see monitoring_test.go.
package monitoringtest
