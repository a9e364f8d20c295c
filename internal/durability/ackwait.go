package durability

import (
	"fmt"
	"slices"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// stallVersions are the broker versions on which the replica-stall
// experiment (internal/lab/experiment, stall.go; docs/methodology.md)
// measured how many replicas an acknowledgement waits for, at
// stallReplicas replicas. As with experimentVersions, the experiment's
// test fails when the version it ran is missing here.
var stallVersions = map[v1alpha1.System][]string{
	v1alpha1.SystemKafka:  {"4.3.1"},
	v1alpha1.SystemPulsar: {"4.0.7"},
}

// stallReplicas is the replication the replica-stall experiment ran at:
// Kafka's replication factor, Pulsar's ensemble and write quorum.
const stallReplicas = 3

// StallVersions are the versions of system the replica-stall experiment
// covers.
func StallVersions(system v1alpha1.System) []string {
	return slices.Clone(stallVersions[system])
}

// AckWait is how many replicas a write's acknowledgement waits for.
type AckWait struct {
	// Healthy is how many it waits for while every replica keeps up; Of is
	// how many have the write.
	Healthy, Of int32
	// Least is how few it may wait for once the system stops waiting for
	// a stalled replica (Kafka: at least min.insync.replicas, once the
	// leader drops the replica from the ISR); Healthy when that never
	// happens by itself.
	Least int32
	// Description says it in words, for the explanation and the report.
	Description string
}

// AckWaitOf reads, from the settings in effect, how many replicas an
// acknowledgement waits for, as the replica-stall experiment measured the
// settings to behave (docs/methodology.md): Kafka's acks=all waits for
// every in-sync replica — all of them while they keep up, not "a
// majority"; min.insync.replicas is only the smallest ISR a write is
// accepted with — and acks=1 for the leader alone; Pulsar's ack quorum for
// that many bookies of the write quorum, whatever the third does. ok is
// false when eff says neither.
func AckWaitOf(eff v1alpha1.EffectiveDurability) (AckWait, bool) {
	switch {
	case eff.Kafka != nil:
		rf := eff.Kafka.ReplicationFactor
		if eff.Kafka.Producer[KafkaProducerAcks] != "all" {
			return AckWait{Healthy: 1, Of: rf, Least: 1, Description: fmt.Sprintf("the leader alone: 1 of %d replicas (acks=1)", rf)}, true
		}
		least := rf
		if v, ok := eff.Kafka.Topic[KafkaTopicMinInsyncReplicas]; ok {
			var n int32
			if _, err := fmt.Sscan(v, &n); err == nil && n > 0 && n <= rf {
				least = n
			}
		}
		if least == rf {
			return AckWait{Healthy: rf, Of: rf, Least: rf, Description: fmt.Sprintf("every in-sync replica: %d of %d (acks=all)", rf, rf)}, true
		}
		return AckWait{Healthy: rf, Of: rf, Least: least, Description: fmt.Sprintf(
			"every in-sync replica: %d of %d while all keep up, down to min.insync.replicas %d once the leader drops a lagging one from the ISR (replica.lag.time.max.ms) (acks=all)", rf, rf, least)}, true
	case eff.Pulsar != nil:
		p := eff.Pulsar
		return AckWait{Healthy: p.AckQuorum, Of: p.WriteQuorum, Least: p.AckQuorum, Description: fmt.Sprintf(
			"%d of %d bookies, whichever answer first (ack quorum %d of write quorum %d)", p.AckQuorum, p.WriteQuorum, p.AckQuorum, p.WriteQuorum)}, true
	}
	return AckWait{}, false
}

// stallMeasured says whether the replica-stall experiment covers system at
// version with of replicas.
func stallMeasured(system v1alpha1.System, version string, of int32) bool {
	return version != "" && of == stallReplicas && slices.Contains(stallVersions[system], version)
}

// ackWaitNote is the explanation's sentence on the acknowledgement's wait.
func ackWaitNote(system v1alpha1.System, version string, eff v1alpha1.EffectiveDurability) string {
	w, ok := AckWaitOf(eff)
	if !ok || w.Of < 2 {
		return ""
	}
	s := " An acknowledgement waits for " + w.Description
	if stallMeasured(system, version, w.Of) {
		return s + fmt.Sprintf(", as the replica-stall experiment measured on %s %s with %d replicas (docs/methodology.md).", SystemName(system), version, stallReplicas)
	}
	return s + fmt.Sprintf(" as configured: the replica-stall experiment measured %s %v with %d replicas only.", SystemName(system), stallVersions[system], stallReplicas)
}
