package durability

import (
	"fmt"
	"slices"
	"strings"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// experimentVersions are the broker versions on which the sync-delay
// experiment (internal/lab/experiment, hack/durability-experiment,
// docs/methodology.md) showed every level behaving as Table 1-6 promises:
// acknowledgements wait for a delayed local sync at levels 1 and 3 and for
// none at levels 2 and 4. A version is added here only after the experiment
// passed on it; the experiment's test fails when the version it runs is
// missing, so the list cannot silently drift from what was measured.
var experimentVersions = map[v1alpha1.System][]string{
	v1alpha1.SystemKafka:  {"4.1.1", "4.3.1"},
	v1alpha1.SystemPulsar: {"4.0.7"},
}

// ExperimentVersions are the versions of system the experiment covers.
func ExperimentVersions(system v1alpha1.System) []string {
	return slices.Clone(experimentVersions[system])
}

// Verified reports whether the experiment covers system at version.
func Verified(system v1alpha1.System, version string) bool {
	return version != "" && slices.Contains(experimentVersions[system], version)
}

// TranslateFor is Translate for a known broker version: the result also says
// whether the achieved level is verified by the experiment for that version
// (status.durability.verification) and how it was established
// (status.durability.explanation). version "" means not known.
func TranslateFor(system v1alpha1.System, version string, spec v1alpha1.DurabilitySpec) (v1alpha1.EffectiveDurability, error) {
	eff, err := Translate(system, spec)
	if err != nil {
		return eff, err
	}
	Establish(&eff, system, version)
	return eff, nil
}

// Establish records on eff for which broker version its achieved level holds
// and how that is known, replacing the explanation Translate gave.
func Establish(eff *v1alpha1.EffectiveDurability, system v1alpha1.System, version string) {
	eff.BrokerVersion = version
	name := SystemName(system)
	if Verified(system, version) {
		eff.Verification = v1alpha1.Verified
		eff.Explanation = fmt.Sprintf("Level %d as configured, verified by the sync-delay experiment on %s %s "+
			"(hack/durability-experiment, docs/methodology.md): %s",
			eff.AchievedLevel, name, version, evidence(system, *eff)) + ackWaitNote(system, version, *eff)
		return
	}
	eff.Verification = v1alpha1.NotVerified
	what := "the broker version is not known"
	if version != "" {
		what = "it does not cover " + name + " " + version
	}
	eff.Explanation = fmt.Sprintf("Level %d as configured, not verified: the sync-delay experiment (docs/methodology.md) covers %s %s only and %s; "+
		"rerun hack/durability-experiment on that version to verify it.%s",
		eff.AchievedLevel, name, strings.Join(experimentVersions[system], ", "), what, costNote(system, *eff)) + ackWaitNote(system, version, *eff)
}

// evidence is what the experiment showed for the level's settings.
func evidence(system v1alpha1.System, eff v1alpha1.EffectiveDurability) string {
	switch {
	case system == v1alpha1.SystemKafka && eff.Local == v1alpha1.LocalSync:
		return "with flush.messages=1 and flush.ms=0 every acknowledgement waited for the delayed syncs, contrary to the durability study's " +
			"claim (Tables 1-10 and 1-11) that Kafka acks before the fsync." + costNote(system, eff)
	case system == v1alpha1.SystemKafka:
		return "with the default flush settings no acknowledgement waited for a sync, so local durability is async as configured."
	case eff.Local == v1alpha1.LocalSync:
		return "with journalSyncData=true every acknowledgement waited for the journal's sync."
	case eff.Journal == v1alpha1.JournalBypass:
		return "with the journal bypassed no acknowledgement waited for a sync, so local durability is async as configured."
	default:
		return "with journalSyncData=false no acknowledgement waited for a sync, so local durability is async as configured."
	}
}

// costNote explains the price of Kafka's per-message flush, which is not the
// single journal sync per group that Pulsar pays.
func costNote(system v1alpha1.System, eff v1alpha1.EffectiveDurability) string {
	if system != v1alpha1.SystemKafka || eff.Local != v1alpha1.LocalSync {
		return ""
	}
	if eff.Replication == v1alpha1.ReplicationSync {
		return " The cost is a sync per append on every replica: the leader flushes the log segment and its indexes before it answers, " +
			"and each follower flushes before it fetches again, which is what advances the high watermark acks=all waits for."
	}
	return " The cost is a sync per append on every replica: the leader flushes the log segment and its indexes before it answers acks=1, " +
		"and the followers flush each fetched batch as well."
}

// SystemName is the product name of system, for messages.
func SystemName(system v1alpha1.System) string {
	switch system {
	case v1alpha1.SystemKafka:
		return "Kafka"
	case v1alpha1.SystemPulsar:
		return "Pulsar"
	}
	return string(system)
}

// VerificationLabel is how reports show the verification, naming what
// was verified: "verified for Kafka 4.3.1 (where syncs fall; the replicas
// an ack waits for, at 3)", "verified for Kafka 4.1.1 (where syncs fall)"
// where one replica makes the second property moot, "… the replicas an
// ack waits for as configured" where the replica-stall experiment does not
// cover the version or the replication, or "as configured, not verified".
func VerificationLabel(eff *v1alpha1.EffectiveDurability) string {
	if eff == nil || eff.Verification != v1alpha1.Verified || eff.BrokerVersion == "" {
		return "as configured, not verified"
	}
	sys := systemOf(eff)
	what := "where syncs fall"
	if w, ok := AckWaitOf(*eff); ok && w.Of >= 2 {
		if stallMeasured(sys, eff.BrokerVersion, w.Of) {
			what += fmt.Sprintf("; the replicas an ack waits for, at %d", w.Of)
		} else {
			what += "; the replicas an ack waits for as configured"
		}
	}
	return "verified for " + SystemName(sys) + " " + eff.BrokerVersion + " (" + what + ")"
}

func systemOf(eff *v1alpha1.EffectiveDurability) v1alpha1.System {
	if eff.Pulsar != nil {
		return v1alpha1.SystemPulsar
	}
	return v1alpha1.SystemKafka
}
