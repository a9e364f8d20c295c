package v1alpha1

import (
	"fmt"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FaultAction is what a fault does to its target.
// +kubebuilder:validation:Enum=Pause;Kill;DeletePod
type FaultAction string

const (
	// FaultPause stops the target's process (SIGSTOP) for the fault's
	// duration, then lets it go on (SIGCONT): a broker that hangs (a long
	// GC pause, a stalled disk) while its connections and leases stay open,
	// which is what the replica-stall experiment did by hand
	// (internal/lab/experiment/stall.go).
	FaultPause FaultAction = "Pause"
	// FaultKill kills the target's process (SIGKILL): no shutdown hook, no
	// flush. In a cluster the kubelet restarts the container in the same
	// pod, on the same volume.
	FaultKill FaultAction = "Kill"
	// FaultDeletePod deletes the target's pod (a graceful delete, as a node
	// drain does); its StatefulSet or Strimzi makes it again. In a cluster
	// only.
	FaultDeletePod FaultAction = "DeletePod"
)

// FaultActions are the values action accepts (the CRD enum).
var FaultActions = []FaultAction{FaultPause, FaultKill, FaultDeletePod}

// FaultRole is the part a target plays in the system under test.
type FaultRole string

const (
	// RoleBroker is a Kafka broker or a Pulsar broker. Kafka's managed
	// brokers are KRaft controllers too (combined roles,
	// internal/provision/strimzi/nodepool.go).
	RoleBroker FaultRole = "broker"
	// RoleController is a Kafka KRaft controller (kafka only). In a
	// managed run every broker is also a controller, so controller-1 is
	// the same node, pod and process as broker-1; it is accepted so a
	// schedule says what it means to hit, and status names the pod hit.
	RoleController FaultRole = "controller"
	// RoleBookie is a BookKeeper bookie (pulsar only).
	RoleBookie FaultRole = "bookie"
	// RoleZooKeeper is a ZooKeeper node, Pulsar's metadata store (pulsar
	// only).
	RoleZooKeeper FaultRole = "zookeeper"
	// RoleLeader is the broker that leads the run's first topic's
	// partition 0 (Pulsar: the broker that owns it) at the moment of the
	// fault, looked up then: the one broker whose loss the clients must
	// fail over from, whichever it turns out to be. It has no ordinal.
	RoleLeader FaultRole = "leader"
)

// MaxFaultOrdinal is the highest ordinal a target can name (four digits,
// the CRD's pattern): far above any benchmark cluster.
const MaxFaultOrdinal = 9999

// FaultTarget names what a fault hits by role and ordinal: broker-0,
// bookie-2, zookeeper-1, controller-0, or leader. Ordinals count from 0,
// as the pods do: broker-1 of a managed Kafka is Strimzi's node 1 (pod
// <cluster>-<pool>-1), of a managed Pulsar the StatefulSet's pod
// <release>-broker-1; in local mode broker-1 is the second Kafka node
// (node id 2). A target resolves only to a pod or process of the run's own
// brokers (or, opted in, of spec.cluster.existing's), never to anything
// else.
// +kubebuilder:validation:MaxLength=16
// +kubebuilder:validation:Pattern=`^((broker|controller|bookie|zookeeper)-(0|[1-9][0-9]{0,3})|leader)$`
type FaultTarget string

// Parse splits a target into its role and ordinal (-1 for leader). The
// error says what a target looks like: the CRD's pattern refuses the same,
// so it is seen only for a spec built in Go.
func (t FaultTarget) Parse() (FaultRole, int, error) {
	if FaultRole(t) == RoleLeader {
		return RoleLeader, -1, nil
	}
	bad := fmt.Errorf("%q is not a fault target: write <role>-<ordinal> with role broker, controller, bookie or zookeeper and the ordinal from 0 (e.g. broker-1), or leader", string(t))
	i := strings.LastIndexByte(string(t), '-')
	if i <= 0 {
		return "", 0, bad
	}
	role, num := FaultRole(t[:i]), string(t[i+1:])
	switch role {
	case RoleBroker, RoleController, RoleBookie, RoleZooKeeper:
	default:
		return "", 0, bad
	}
	n, err := strconv.Atoi(num)
	// One spelling per ordinal (no "01", no "+1") and four digits at most,
	// as the CRD's pattern.
	if err != nil || n < 0 || n > MaxFaultOrdinal || strconv.Itoa(n) != num {
		return "", 0, bad
	}
	return role, n, nil
}

// Fault is one fault of spec.faults: an action on a target, at a time of
// the measured phase, for a while when the action has one.
// +kubebuilder:validation:XValidation:rule="self.action != 'Pause' || has(self.duration)",message="a Pause needs duration: how long the target stays stopped (SIGSTOP, then SIGCONT), e.g. duration: 30s"
// +kubebuilder:validation:XValidation:rule="self.action == 'Pause' || !has(self.duration)",message="duration applies to Pause only: a Kill or DeletePod has no end of its own (the process or pod comes back when Kubernetes restarts it); remove duration"
type Fault struct {
	// Action is Pause (SIGSTOP for duration, then SIGCONT), Kill (SIGKILL)
	// or DeletePod (in a cluster only).
	Action FaultAction `json:"action"`
	// Target is broker-<n>, controller-<n> (kafka), bookie-<n> or
	// zookeeper-<n> (pulsar), ordinals from 0, or leader: the broker
	// leading the first topic's partition 0 when the fault comes.
	Target FaultTarget `json:"target"`
	// At is when the fault comes, after the start of the measured phase
	// (the warm-up, a rate search and a backlog's build and drain come
	// before it and are not counted), e.g. 2m. It must fall inside the
	// measured phase (spec.workload.testDurationMinutes).
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ns|us|µs|ms|s|m|h))+$')",message="must be a duration such as 90s, 2m or 1m30s after the start of the measured phase (units ns, us, ms, s, m, h)"
	At metav1.Duration `json:"at"`
	// Duration is how long a Pause lasts; required for Pause, refused for
	// the others. The pause must end inside the measured phase.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ns|us|µs|ms|s|m|h))+$')",message="must be a duration such as 10s, 30s or 1m (units ns, us, ms, s, m, h)"
	// +optional
	Duration *metav1.Duration `json:"duration,omitempty"`
}

// ExistingClusterFaults is the explicit consent to spec.faults on brokers
// the run did not deploy. Without it a run with faults on
// spec.cluster.existing is refused: those brokers may serve others, and
// a benchmark must not stop, kill or delete them by a typo.
type ExistingClusterFaults struct {
	// AllowDisruption must be true: the cluster's owner agrees that the
	// run stops, kills or deletes the pods spec.faults name.
	AllowDisruption bool `json:"allowDisruption"`
	// Namespace of the brokers' pods; empty means strimziCluster's
	// namespace, else the run's.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// PodSelector selects the cluster's pods, every role; a pod's role is
	// read from the labels Strimzi (strimzi.io/broker-role,
	// strimzi.io/controller-role) or the Apache Pulsar chart (component)
	// put on it, its ordinal from its name's last number. Required unless
	// strimziCluster names the cluster (then strimzi.io/cluster=<name>):
	// with bootstrapServers or a Pulsar URL nothing says which pods serve
	// them.
	// +optional
	PodSelector *metav1.LabelSelector `json:"podSelector,omitempty"`
}

// FaultRepeat is the status.faults repeat of a run's i-th repeat (from 0):
// i+1 in a repeated run, 0 (absent) in one that is not. Both modes number
// them so: a repeat's faults are those of its directory, repeat-<n>.
func FaultRepeat(repeated bool, i int) int32 {
	if !repeated {
		return 0
	}
	return int32(i + 1)
}

// FaultStatus is what became of one fault of spec.faults (of one repeat,
// for a repeated run: the schedule is applied in each repeat's measured
// phase).
type FaultStatus struct {
	// Index is the fault's place in spec.faults, from 0.
	Index int32 `json:"index"`
	// Repeat is the repeat the fault was applied in, from 1; absent for a
	// run that is not repeated.
	// +optional
	Repeat int32 `json:"repeat,omitempty"`
	// Action and Target as spec.faults[index] says.
	Action FaultAction `json:"action"`
	Target FaultTarget `json:"target"`
	// Resolved is what the target turned out to be at the fault's time:
	// a pod (namespace/name, container) or a local process (pid and name),
	// and for leader the partition it led.
	// +optional
	Resolved string `json:"resolved,omitempty"`
	// Pod is the target's pod (namespace/name) in a cluster; the operator
	// watches it come back (clearedAt, for a Kill or a DeletePod).
	// +optional
	Pod string `json:"pod,omitempty"`
	// Node is the node the target's pod ran on when the fault came.
	// +optional
	Node string `json:"node,omitempty"`
	// Injected is true once the action was carried out.
	Injected bool `json:"injected"`
	// InjectedAt is when the action was carried out, to the microsecond:
	// the fault's figures are counted from it, at the intervals'
	// resolution.
	// +optional
	InjectedAt *metav1.MicroTime `json:"injectedAt,omitempty"`
	// ClearedAt is when the fault ended: SIGCONT for a Pause; for a Kill
	// the container running again and ready, for a DeletePod its new pod
	// ready. Absent while the fault lasts, and when it never ended inside
	// the run.
	// +optional
	ClearedAt *metav1.MicroTime `json:"clearedAt,omitempty"`
	// Message says why a fault was not injected (a target not found, the
	// run ended first) or what went wrong clearing it.
	// +optional
	Message string `json:"message,omitempty"`
	// Impact is what the fault did to the load, from the measured phase's
	// intervals (internal/faultimpact; docs/results.md, "Faults").
	// +optional
	Impact *FaultImpact `json:"impact,omitempty"`
}

// FaultImpact is what one fault did to the load, read from the measured
// phase's intervals (internal/faultimpact; docs/results.md, "Faults").
// Times are seconds and good to about one interval.
type FaultImpact struct {
	// IntervalSeconds is the length of the intervals the figures are read
	// from (10 unless the series was thinned).
	IntervalSeconds float64 `json:"intervalSeconds"`
	// InjectedSeconds and ClearedSeconds place the fault in the measured
	// phase (seconds after its start); ClearedSeconds is absent when the
	// fault did not end inside it.
	InjectedSeconds float64 `json:"injectedSeconds"`
	// +optional
	ClearedSeconds *float64 `json:"clearedSeconds,omitempty"`
	// TargetRateMsgPerSec is the rate the producers were asked for: the
	// workload's producerRate, or the rate the search found.
	TargetRateMsgPerSec float64 `json:"targetRateMsgPerSec"`
	// LowestPublishRateMsgPerSec is the lowest interval's publish rate
	// (acknowledged messages) from the fault until the load was back for
	// good, or until it cleared if later; LowestRateFraction is the same
	// over the target rate: 1 is no dip, 0 an interval without an
	// acknowledgement.
	LowestPublishRateMsgPerSec float64 `json:"lowestPublishRateMsgPerSec"`
	LowestRateFraction         float64 `json:"lowestRateFraction"`
	// RecoveryIntervals is how many intervals in a row must meet the bar
	// (publish rate at least 95 % of the target, p99 at most twice its
	// pre-fault median) for the load to count as back.
	RecoveryIntervals int32 `json:"recoveryIntervals"`
	// RecoverySeconds is from the fault to the start of the first
	// RecoveryIntervals intervals that met the bar (0 when the load never
	// fell below it); absent when it never came back.
	// +optional
	RecoverySeconds *float64 `json:"recoverySeconds,omitempty"`
	// Relapses counts the times the load fell below the bar again after
	// RecoverySeconds, before the next fault or the end of the phase (a
	// broker that comes back and takes its partitions back, a client that
	// reconnects late).
	// +optional
	Relapses int32 `json:"relapses,omitempty"`
	// Recovered is true when the load came back and stayed: after its last
	// relapse it met the bar RecoveryIntervals intervals in a row and never
	// fell below it again before the next fault or the end of the phase.
	Recovered bool `json:"recovered"`
	// StableRecoverySeconds is from the fault to the start of those
	// intervals: RecoverySeconds when there was no relapse; absent when
	// not Recovered.
	// +optional
	StableRecoverySeconds *float64 `json:"stableRecoverySeconds,omitempty"`
	// PublishErrors is the sends that failed over the same intervals as
	// the lowest rate.
	PublishErrors int64 `json:"publishErrors"`
	// Lost is the acknowledged messages sent over the same intervals
	// that a subscription never received (summary.json's series[].lost
	// added up): this fault's share of results.lost, where a run of
	// several faults tells them apart. Absent when the run's delivery
	// record does not place its losses.
	// +optional
	Lost *int64 `json:"lost,omitempty"`
	// Duplicates is the deliveries beyond the first that the workers
	// received over the same intervals.
	// +optional
	Duplicates int64 `json:"duplicates,omitempty"`
	// LatencySeries is the p99 the recovery and the figures below use:
	// corrected (ack - intended send: it counts the sends the producers
	// could not make while the brokers stalled) where the intervals have
	// it, else publish (ack - send, which misses them).
	LatencySeries string `json:"latencySeries"`
	// PreFaultP99Ms is the median p99 of the intervals before the fault
	// (after any earlier fault's recovery); absent when there was none,
	// and the recovery is then judged on the rate alone.
	// +optional
	PreFaultP99Ms *float64 `json:"preFaultP99Ms,omitempty"`
	// WorstP99Ms is the highest interval p99 over the same intervals as
	// the lowest rate; absent when none of them had an acknowledgement.
	// +optional
	WorstP99Ms *float64 `json:"worstP99Ms,omitempty"`
	// LongestWaitMs is the longest any send waited for its
	// acknowledgement over the same intervals (the intervals' maxima of
	// LatencySeries): the first send a stall held back waited it whole,
	// so this is how long the writes stopped; absent when none of them
	// had an acknowledgement.
	// +optional
	LongestWaitMs *float64 `json:"longestWaitMs,omitempty"`
	// NotResumedSeconds is set when the load did not recover and its last
	// intervals had no acknowledgement at all: how long they went without
	// one. The writes had not resumed when the phase (or the span before
	// the next fault) ended, so the stall outlasted what was measured.
	// +optional
	NotResumedSeconds *float64 `json:"notResumedSeconds,omitempty"`
	// Stall explains a longest wait that was a stall (above a second and
	// above twice the pre-fault p99) by the broker setting in effect it
	// matches, or says that none does; absent when there was no stall.
	// +optional
	Stall *FaultStall `json:"stall,omitempty"`
	// Notes say what limits the figures (no interval before the fault, an
	// earlier fault not recovered, the next fault too soon).
	// +listType=atomic
	// +optional
	Notes []string `json:"notes,omitempty"`
}

// FaultStall is a fault's stall and the setting that explains it.
type FaultStall struct {
	// Seconds is how long the writes stopped: LongestWaitMs in seconds.
	Seconds float64 `json:"seconds"`
	// Setting names what the stall matches: a broker setting read from
	// the brokers (broker.session.timeout.ms, bookkeeperClientTimeoutInSeconds)
	// or the fault's own length (a Pause); empty when nothing does.
	// +optional
	Setting string `json:"setting,omitempty"`
	// SettingSeconds is that setting's value, in seconds.
	// +optional
	SettingSeconds *float64 `json:"settingSeconds,omitempty"`
	// Unfinished says the writes had not resumed when the measurement
	// ended (NotResumedSeconds): Seconds is a lower bound, and no setting
	// shorter than it explains the stall.
	// +optional
	Unfinished bool `json:"unfinished,omitempty"`
	// Explanation says it in words: "writes stopped 9.8 s: matches
	// broker.session.timeout.ms 9000 ms (...)", or which settings were
	// read and that none matches.
	Explanation string `json:"explanation"`
}
