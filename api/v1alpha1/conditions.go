package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types of a BenchmarkRun.
const (
	// ConditionDurabilityResolved is True when spec.durability was translated
	// into the system's settings (status.durability).
	ConditionDurabilityResolved = "DurabilityResolved"
	// ConditionBrokerVersionResolved says, for a managed Kafka run, which
	// Kafka version its durability is stated for and how it was chosen
	// from the versions the installed Strimzi supports: True when the
	// Kafka names that version, Unknown when no Strimzi cluster operator
	// was found and Strimzi's default is assumed, False when
	// spec.cluster.managed.version is one Strimzi does not deploy (the run
	// fails before anything is deployed).
	ConditionBrokerVersionResolved = "BrokerVersionResolved"
	// ConditionBrokersReady is True when the brokers accept the workload.
	ConditionBrokersReady = "BrokersReady"
	// ConditionWorkersCompleted is True when the workers finished the workload.
	ConditionWorkersCompleted = "WorkersCompleted"
	// ConditionResultsRecorded is True when the results are in status and in
	// the results ConfigMap.
	ConditionResultsRecorded = "ResultsRecorded"
	// ConditionFailed is True when the run failed; its message says why.
	ConditionFailed = "Failed"
	// ConditionTornDown is True when what the run deployed (brokers,
	// workers) was removed by spec.teardown.policy.
	ConditionTornDown = "TornDown"
	// ConditionRunTimeout is False when spec.timeouts.run is below the
	// time the workload needs (workload.Estimate); the run goes on, but
	// will likely be stopped before it ends.
	ConditionRunTimeout = "RunTimeoutSufficient"
	// ConditionThresholdsMet is True when every bound of spec.thresholds
	// held on the final results, False naming each failed one with its
	// measured value; absent for a run without thresholds.
	ConditionThresholdsMet = "ThresholdsMet"
	// ConditionQueued says whether a managed run waits before deploying
	// its brokers (phase Queued, internal/runqueue): True with reason
	// WaitingForRun naming the run it waits for (one on the same nodes,
	// or created earlier and waiting too), or WaitingForDisks naming the
	// static volumes to free; False (reason Admitted) once it may deploy,
	// which is also what tells later runs that it holds the nodes. Absent
	// for a run on an existing cluster, which never queues.
	ConditionQueued = "Queued"
	// ConditionWorkersSchedulable says, before anything is deployed,
	// whether some node could take a worker under spec.workers.placement:
	// True naming how many, False (the run fails at once) naming what the
	// nodes lack. Without it a run with no client node failed only once
	// its workers were created, after the brokers were deployed.
	ConditionWorkersSchedulable = "WorkersSchedulable"
	// ConditionArchived says, for a finished run with an archive
	// (spec.results.archive or the operator's default), whether its
	// results were copied there: True naming where (status.archive),
	// False with reason ArchiveFailed naming the error while the operator
	// retries, and ArchiveAbandoned after ArchiveAttempts tries. Either
	// way the results stay in the results ConfigMap.
	ConditionArchived = "Archived"
)

// Condition reasons shared by the controller and the tests.
const (
	ReasonArchiveFailed    = "ArchiveFailed"
	ReasonArchiveAbandoned = "ArchiveAbandoned"
	ReasonArchived         = "Archived"
	ReasonTranslated       = "Translated"
	ReasonLevelDowngraded  = "LevelDowngraded"
	ReasonInvalid          = "InvalidSpec"
	// ReasonNotPermitted fails a run that reaches into another namespace
	// whose owner has not agreed to it (internal/tenancy).
	ReasonNotPermitted = "NotPermitted"
	// ReasonWaitingForRun, ReasonWaitingForDisks and ReasonAdmitted are
	// the reasons of ConditionQueued.
	ReasonWaitingForRun   = "WaitingForRun"
	ReasonWaitingForDisks = "WaitingForDisks"
	ReasonAdmitted        = "Admitted"
	// ReasonNoWorkerNode: no node can take a worker (ConditionWorkersSchedulable).
	ReasonNoWorkerNode = "NoWorkerNode"
	// ReasonMetadataStoreClass fails a managed Pulsar run in Pending
	// whose ZooKeeper claims would get no StorageClass (none named, no
	// default) or the bookies' static one (pulsar.CheckMetadataStoreClass).
	ReasonMetadataStoreClass = "MetadataStoreClass"
	// ReasonMetadataStoreOnBookieClass is the warning event of a run whose
	// ZooKeeper claims get the bookies' class, provisioned on demand.
	ReasonMetadataStoreOnBookieClass = "MetadataStoreOnBookieClass"
)

// SetCondition sets a condition, stamping it with the run's generation.
func (r *BenchmarkRun) SetCondition(condType string, status metav1.ConditionStatus, reason, message string) bool {
	return meta.SetStatusCondition(&r.Status.Conditions, metav1.Condition{
		Type:               condType,
		Status:             status,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: r.Generation,
	})
}

// MoveTo moves the run to the next phase if that is a forward move, and
// reports whether it did.
// The entry time is recorded in status.phaseTimes (and, for a finished
// run, status.completionTime).
func (r *BenchmarkRun) MoveTo(next Phase, message string) bool {
	if !r.Status.Phase.CanMoveTo(next) {
		return false
	}
	now := metav1.Now()
	r.Status.Phase = next
	r.Status.Message = message
	r.Status.recordEntry(next, now)
	if next.Finished() && r.Status.CompletionTime == nil {
		r.Status.CompletionTime = &now
	}
	return true
}

// setCondition is SetCondition for any object with conditions.
func setCondition(conds *[]metav1.Condition, generation int64, condType string, status metav1.ConditionStatus, reason, message string) bool {
	return meta.SetStatusCondition(conds, metav1.Condition{
		Type:               condType,
		Status:             status,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: generation,
	})
}
