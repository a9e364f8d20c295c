package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// TestbedSpec asks for what makes a run's ground comparable with another's.
type TestbedSpec struct {
	// Probe measures the ground before the load (default true): a Job per
	// broker or bookie node writes to a 1 Gi ephemeral volume of the
	// brokers' StorageClass (an existing cluster: a node of the workers'
	// pool, on an emptyDir) and records the node's disk, CPU, memory and
	// kernel in status.testbed. Set it to false to run no probe Job and
	// claim no volume; status.testbed.note then says so. Even when true, a
	// class with static volumes (provisioner kubernetes.io/no-provisioner,
	// e.g. one local PersistentVolume per NVMe disk), a class that does
	// not exist, or no class at all (none named and no default class) is
	// never claimed: there every volume is some broker's disk, and the
	// probe would take one. The note says which was left out and why.
	// +kubebuilder:default=true
	// +optional
	Probe *bool `json:"probe,omitempty"`
	// DropPageCache drops the page cache of every broker and bookie node
	// before the load starts (so before warm-up and the measured phase), and
	// again, mid-run, just before the catch-up reads of a backlog or mixed
	// workload drain the backlog, as the durability study did before every
	// catch-up test: so no read comes from what an earlier run, the probe
	// or the backlog's own writes left in memory. It runs a privileged pod
	// on each of those nodes (writing /proc/sys/vm/drop_caches needs it); a
	// namespace whose Pod Security level forbids privileged pods fails the
	// run at once. Each drop is recorded in status.testbed.pageCacheDrops
	// and in summary.json.
	// +optional
	DropPageCache bool `json:"dropPageCache,omitempty"`
}

// ProbeOrDefault is spec.testbed.probe, true when unset: a run without a
// testbed section (whose default the API server never fills in) is probed.
func (t *TestbedSpec) ProbeOrDefault() bool {
	return t == nil || t.Probe == nil || *t.Probe
}

// TestbedScope says which nodes a testbed probe measured.
// +kubebuilder:validation:Enum=BrokerNodes;WorkerNodes;LocalHost
type TestbedScope string

const (
	// TestbedBrokerNodes: each node that runs a broker or bookie, on a
	// volume of the brokers' StorageClass (managed clusters).
	TestbedBrokerNodes TestbedScope = "BrokerNodes"
	// TestbedWorkerNodes: a node of the workers' pool; the brokers' disks
	// were not measured (existing clusters).
	TestbedWorkerNodes TestbedScope = "WorkerNodes"
	// TestbedLocalHost: this machine, on the brokers' data directory
	// (local mode).
	TestbedLocalHost TestbedScope = "LocalHost"
)

// Testbed is what a run stood on: the nodes and disks under the brokers, as
// measured before the load, and the topology of the system under test.
type Testbed struct {
	// Scope says which nodes were measured.
	Scope TestbedScope `json:"scope"`
	// Note says what the figures do not cover (e.g. the brokers' disks of
	// an existing cluster).
	// +optional
	Note string `json:"note,omitempty"`
	// Topology of the system under test.
	// +optional
	Topology *Topology `json:"topology,omitempty"`
	// Nodes are the probed nodes, by name.
	// +optional
	// +listType=atomic
	Nodes []NodeProbe `json:"nodes,omitempty"`
	// SlowestFsyncP99Ms is the highest write+fdatasync p99 over all probed
	// volumes: the disk that bounds a journal's latency.
	// +optional
	SlowestFsyncP99Ms *float64 `json:"slowestFsyncP99Ms,omitempty"`
	// PageCacheDropped is when the page cache of the broker nodes was
	// dropped (spec.testbed.dropPageCache).
	// +optional
	PageCacheDropped *metav1.Time `json:"pageCacheDropped,omitempty"`
	// PageCacheDrops are the page-cache drops of the run, in order: the one
	// before the load (seq 0) and each one the coordinator asked for
	// mid-run (e.g. before the backlog drain). A drop that did not happen
	// is recorded too, with dropped false and why.
	// +optional
	// +listType=atomic
	PageCacheDrops []PageCacheDrop `json:"pageCacheDrops,omitempty"`
	// Workers is where the load generator ran: the node of each worker
	// and of the coordinator, recorded once all of them are scheduled.
	// Workers that share a node share its CPUs and network, so the client
	// side may bound the results; CoLocated says so.
	// +optional
	Workers *WorkerPlacement `json:"workers,omitempty"`
	// Machines says which of the run's nodes are one machine: nodes on
	// one machine (several kubelets on one host, or kind's node
	// containers) share its CPUs, memory, disk and page cache, and each
	// reports the whole of them, so their per-node figures are that
	// machine's, measured once per node. Recorded before the load over
	// the brokers', bookies' and probed nodes (the coordinator carries
	// this record into summary.json), and again in status once the
	// workers are placed, with the workers' and the coordinator's nodes.
	// +optional
	Machines *TestbedMachines `json:"machines,omitempty"`
}

// TestbedMachines is which of a run's nodes share a machine, from the
// ids their kubelets report (status.nodeInfo): nodes with the same boot
// id run on one kernel, so one machine (kind's node containers too, whose
// machine ids differ); nodes with the same machine id (/etc/machine-id)
// are one machine unless both report boot ids and these differ (machines
// cloned from one image keep its machine id).
type TestbedMachines struct {
	// Nodes is how many distinct nodes were looked at.
	Nodes int32 `json:"nodes"`
	// Machines is how many machines carry them (a node that reports
	// neither id counts as one of its own); 0 when not known: the operator
	// may not list Nodes, and Note says so.
	// +optional
	Machines int32 `json:"machines,omitempty"`
	// Hosts are the machines that carry more than one of the nodes; a
	// node in none of them is a machine of its own.
	// +optional
	// +listType=atomic
	Hosts []TestbedHost `json:"hosts,omitempty"`
	// Note says it in words, e.g. "3 nodes on 1 machine (a, b, c share
	// boot id 1a2b3c4d): their CPU, memory and disk figures are one
	// machine's, measured 3 times, not 3 machines'".
	// +optional
	Note string `json:"note,omitempty"`
}

// TestbedHost is one machine that carries several of a run's nodes.
type TestbedHost struct {
	// Nodes on this machine, by name.
	// +listType=atomic
	Nodes []string `json:"nodes"`
	// By is the id that showed it: BootID when nodes share a running
	// kernel, MachineID when only /etc/machine-id joined them (a node
	// reported no boot id).
	By HostID `json:"by"`
	// ID is that id's first 8 characters: enough to tell machines apart,
	// and a machine id is not to be published whole (machine-id(5)).
	ID string `json:"id"`
}

// HostID names the node id that showed nodes to share a machine.
// +kubebuilder:validation:Enum=BootID;MachineID
type HostID string

const (
	// HostBootID is status.nodeInfo.bootID, the kernel's
	// /proc/sys/kernel/random/boot_id.
	HostBootID HostID = "BootID"
	// HostMachineID is status.nodeInfo.machineID, /etc/machine-id.
	HostMachineID HostID = "MachineID"
)

// WorkerPlacement is where a run's worker and coordinator pods ran.
type WorkerPlacement struct {
	// Workers is the number of worker pods.
	Workers int32 `json:"workers"`
	// WorkerNodes is the number of distinct nodes the workers ran on.
	WorkerNodes int32 `json:"workerNodes"`
	// CoLocated is true when several workers shared a node (fewer nodes
	// could take them than there were workers, or the placement asked
	// for it).
	CoLocated bool `json:"coLocated"`
	// Pods are the worker and coordinator pods with their nodes, by pod
	// name.
	// +listType=atomic
	Pods []PodPlacement `json:"pods"`
	// Note says it in words, e.g. "4 workers on 2 nodes (co-located:
	// client-a runs 2, client-b runs 2); the coordinator on client-a".
	// +optional
	Note string `json:"note,omitempty"`
}

// PodPlacement is one load pod and its node.
type PodPlacement struct {
	Pod string `json:"pod"`
	// Role is worker or coordinator.
	Role string `json:"role"`
	Node string `json:"node"`
}

// PageCacheDrop is one drop of the broker nodes' page cache.
type PageCacheDrop struct {
	// Seq is the request's number: 0 for the drop before the load, 1, 2, ...
	// for the coordinator's mid-run requests.
	Seq int32 `json:"seq"`
	// Reason is the point of the run the drop came before, e.g. "before
	// the backlog drain (catch-up reads)".
	Reason string `json:"reason"`
	// At is when the drop ended (or was found impossible).
	At metav1.Time `json:"at"`
	// Dropped says whether the page cache was dropped on every broker node.
	Dropped bool `json:"dropped"`
	// Nodes are the nodes (or the host, in local mode) it was dropped on.
	// +optional
	// +listType=atomic
	Nodes []string `json:"nodes,omitempty"`
	// Message says why it was not dropped, or what a reader should know.
	// +optional
	Message string `json:"message,omitempty"`
}

// Topology is the shape of the system under test; two runs compare fairly
// only when it is the same.
type Topology struct {
	// Brokers is the number of Kafka or Pulsar brokers; 0 when not known
	// (an existing cluster).
	// +optional
	Brokers int32 `json:"brokers,omitempty"`
	// Bookies is the number of BookKeeper bookies (pulsar).
	// +optional
	Bookies int32 `json:"bookies,omitempty"`
	// DelayEnsembleChange says the Pulsar brokers' BookKeeper client was
	// deployed with delayEnsembleChange (brokerConfig
	// bookkeeper_delayEnsembleChange=true): a ledger that loses a bookie
	// goes on writing at its ack quorum instead of replacing it, so a
	// bookie may be lost with no spare (docs/methodology.md, "One bookie
	// lost").
	// +optional
	DelayEnsembleChange bool `json:"delayEnsembleChange,omitempty"`
	// Version of Kafka or Pulsar; empty when not known.
	// +optional
	Version string `json:"version,omitempty"`
	// Components are what each managed data-path component's pods got:
	// CPU and memory, and the JVM's heap and direct memory inside the
	// memory limit (the rest is the page cache's). Twins compare fairly
	// only inside the same envelope.
	// +optional
	// +listType=atomic
	Components []ComponentEnvelope `json:"components,omitempty"`
	// Image is the brokers' container image (managed): the one Java was
	// read from.
	// +optional
	Image string `json:"image,omitempty"`
	// Java is the Java runtime the brokers ran on: for a managed run, the
	// java of a broker pod's image, probed before the load; in local mode,
	// the java the broker JVMs were started with. Absent when not known
	// (an existing cluster, a probe that failed: Note says why).
	// +optional
	Java *JavaRuntime `json:"java,omitempty"`
}

// JavaRuntime is a Java runtime as `java -XshowSettings:properties
// -version` reports it. Collectors and the JIT change between major
// versions, so two runs compare fairly only on the same major.
type JavaRuntime struct {
	// Version is the full build (java.runtime.version), e.g.
	// 17.0.15+6-Debian-1deb12u1 or 21.0.5+11-LTS.
	Version string `json:"version"`
	// Major is the feature release: 17, 21 (8 for 1.8).
	Major int32 `json:"major"`
	// Vendor is java.vendor, e.g. Eclipse Adoptium, Red Hat, Inc., Debian.
	// +optional
	Vendor string `json:"vendor,omitempty"`
	// VM is java.vm.name, e.g. OpenJDK 64-Bit Server VM (HotSpot) or
	// Eclipse OpenJ9 VM, whose collectors and JIT are others.
	// +optional
	VM string `json:"vm,omitempty"`
}

// ComponentEnvelope is what one component's pods got. Quantities are in
// Kubernetes' notation; empty means not set.
type ComponentEnvelope struct {
	// Component is broker, bookie or metadataStore.
	Component string `json:"component"`
	// Replicas is the number of pods.
	Replicas int32 `json:"replicas"`
	// +optional
	CPURequest string `json:"cpuRequest,omitempty"`
	// +optional
	CPULimit string `json:"cpuLimit,omitempty"`
	// +optional
	MemoryRequest string `json:"memoryRequest,omitempty"`
	// MemoryLimit bounds the JVM and the page cache it fills together;
	// streambench sets it to the request when only a request is given.
	// +optional
	MemoryLimit string `json:"memoryLimit,omitempty"`
	// Heap is the JVM's -Xms and -Xmx.
	// +optional
	Heap string `json:"heap,omitempty"`
	// DirectMemory is the JVM's -XX:MaxDirectMemorySize (Pulsar).
	// +optional
	DirectMemory string `json:"directMemory,omitempty"`
}

// NodeProbe is the probe of one node.
type NodeProbe struct {
	// Node is the Kubernetes node (or host) name.
	Node string `json:"node"`
	// Roles are what runs there: broker, bookie, worker.
	// +optional
	// +listType=atomic
	Roles []string `json:"roles,omitempty"`
	// +optional
	CPUModel string `json:"cpuModel,omitempty"`
	// CPUs is the node's logical CPU count.
	// +optional
	CPUs int32 `json:"cpus,omitempty"`
	// MemoryBytes is the node's total memory.
	// +optional
	MemoryBytes int64 `json:"memoryBytes,omitempty"`
	// +optional
	Kernel string `json:"kernel,omitempty"`
	// Volumes are the probed volumes.
	// +optional
	// +listType=atomic
	Volumes []VolumeProbe `json:"volumes,omitempty"`
	// Error says why the node could not be probed.
	// +optional
	Error string `json:"error,omitempty"`
}

// VolumeProbe is the measurement of one directory: a volume of the
// brokers' StorageClass (data, journal, ledgers) or an emptyDir.
type VolumeProbe struct {
	// Name is the volume's role: data, journal, ledgers, scratch.
	Name string `json:"name"`
	// StorageClassName of the probed volume; empty for an emptyDir or a
	// local directory.
	// +optional
	StorageClassName string `json:"storageClassName,omitempty"`
	// WriteMBPerSec is bounded sequential writes, 1 MiB blocks, ended by an
	// fdatasync, in MB/s (10^6 bytes).
	WriteMBPerSec float64 `json:"writeMBPerSec"`
	// WriteBytes is how much the sequential test wrote.
	WriteBytes int64 `json:"writeBytes"`
	// WriteRoundsMBPerSec are the sequential test's rounds (each an equal
	// share of the bytes, ended by its own fdatasync), in order: their
	// spread is the disk's own noise, which a comparison of two runs'
	// disks must exceed before it calls them different.
	// +optional
	// +listType=atomic
	WriteRoundsMBPerSec []float64 `json:"writeRoundsMBPerSec,omitempty"`
	// FsyncLatencyMs is the latency of small appends, each a write and an
	// fdatasync, as a journal writes.
	FsyncLatencyMs FsyncLatency `json:"fsyncLatencyMs"`
}

// FsyncLatency is the distribution of write+fdatasync appends, in ms.
type FsyncLatency struct {
	// Count of appends measured.
	Count int64 `json:"count"`
	// AppendBytes is the size of each append.
	AppendBytes int64   `json:"appendBytes"`
	P50         float64 `json:"p50"`
	P99         float64 `json:"p99"`
	P999        float64 `json:"p999"`
	Max         float64 `json:"max"`
	// RoundP50s are the medians of the appends' rounds (each an equal
	// share of them), in order: the disk's own spread.
	// +optional
	// +listType=atomic
	RoundP50s []float64 `json:"roundP50s,omitempty"`
}
