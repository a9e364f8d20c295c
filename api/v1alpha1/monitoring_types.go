package v1alpha1

// MonitoringSpec configures how a run is watched and where its broker
// figures come from.
type MonitoringSpec struct {
	// PrometheusURL is the Prometheus the coordinator asks for the brokers'
	// CPU, disk, network and GC over the measured phase (e.g.
	// http://prometheus-operated.monitoring:9090). Empty: the operator
	// looks for kube-prometheus-stack's Prometheus Service; none found
	// means the results carry no broker figures and say why.
	// +optional
	// +kubebuilder:validation:Pattern=`^https?://`
	PrometheusURL string `json:"prometheusURL,omitempty"`
}

// BrokerResources are what the brokers used over the measured phase. A nil
// field was not available from the source (e.g. per-broker network in
// local mode, where all traffic shares the loopback interface, or the
// journal latency of Kafka, which has no journal).
type BrokerResources struct {
	// Source is where the figures come from: "proc" (local mode: the
	// broker processes' /proc files and /proc/diskstats) or "prometheus".
	Source string `json:"source"`
	// Seconds is the length of the window the figures are averaged over
	// (the measured phase).
	Seconds float64 `json:"seconds"`
	// Brokers is how many broker processes or pods were read.
	Brokers int `json:"brokers"`
	// CPUCores is CPU time per second of wall time (1.0 = one core busy).
	// +optional
	CPUCores *float64 `json:"cpuCores,omitempty"`
	// MemoryGiB is the brokers' resident memory, averaged over the window
	// (local mode: each JVM's VmRSS; in a cluster: the containers' working
	// set), GiB (2^30 bytes). The page cache the brokers fill is not in it.
	// +optional
	MemoryGiB *float64 `json:"memoryGiB,omitempty"`
	// DiskWriteMBPerSec is what the brokers wrote to storage, MB/s (10^6).
	// +optional
	DiskWriteMBPerSec *float64 `json:"diskWriteMBPerSec,omitempty"`
	// NetworkInMBPerSec and NetworkOutMBPerSec are the brokers' network
	// traffic, MB/s (10^6).
	// +optional
	NetworkInMBPerSec *float64 `json:"networkInMBPerSec,omitempty"`
	// +optional
	NetworkOutMBPerSec *float64 `json:"networkOutMBPerSec,omitempty"`
	// GCPauseMs is the JVMs' garbage-collection pause time within the
	// window, summed over the brokers, in ms.
	// +optional
	GCPauseMs *float64 `json:"gcPauseMs,omitempty"`
	// JournalLatencyMs is the mean BookKeeper journal add latency (Pulsar);
	// where the bookies export no metrics, the brokers' ledger write
	// latency (the bookie add round trip, bound by the journal's fsync).
	// +optional
	JournalLatencyMs *float64 `json:"journalLatencyMs,omitempty"`
}

// MonitoringStatus is what the operator found and did for monitoring.
type MonitoringStatus struct {
	// Monitored is true when the run's PodMonitors were created (the
	// Prometheus Operator's CRDs are served).
	Monitored bool `json:"monitored"`
	// PodMonitors are the names of the PodMonitors the run created (the
	// Pulsar chart's own are the Helm release's).
	// +optional
	PodMonitors []string `json:"podMonitors,omitempty"`
	// PrometheusURL is the Prometheus the coordinator asks:
	// spec.monitoring.prometheusURL, or kube-prometheus-stack's Service.
	// +optional
	PrometheusURL string `json:"prometheusURL,omitempty"`
	// Message explains what is missing, e.g. no Prometheus Operator CRDs.
	// +optional
	Message string `json:"message,omitempty"`
}
