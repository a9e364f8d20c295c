package durability

import (
	"strings"
	"testing"

	v1 "github.com/streambench/streambench-operator/api/v1alpha1"
)

// TestAckWaitOf: what each level's settings make an acknowledgement wait
// for, on both systems: "2 acks" is 3 of 3 in-sync replicas for Kafka's
// acks=all (2 only once one is dropped from the ISR), 2 of 3 bookies for
// Pulsar; and the explanation says it, naming the experiment where it
// covers the version.
func TestAckWaitOf(t *testing.T) {
	aq3 := v1.DurabilitySpec{Replication: &v1.ReplicationDurability{Mode: v1.ReplicationSync, Replicas: 3, AckReplicas: 3},
		Local: &v1.LocalDurability{Mode: v1.LocalSync, Journal: v1.JournalWrite}}
	for _, tc := range []struct {
		name               string
		sys                v1.System
		spec               v1.DurabilitySpec
		healthy, of, least int32
		says               string
	}{
		{"Kafka level 2", v1.SystemKafka, level(2), 3, 3, 2, "every in-sync replica: 3 of 3 while all keep up, down to min.insync.replicas 2"},
		{"Kafka level 1", v1.SystemKafka, level(1), 3, 3, 2, "every in-sync replica: 3 of 3"},
		{"Kafka level 3", v1.SystemKafka, level(3), 1, 3, 1, "the leader alone: 1 of 3 replicas (acks=1)"},
		{"Pulsar level 2", v1.SystemPulsar, level(2), 2, 3, 2, "2 of 3 bookies, whichever answer first (ack quorum 2 of write quorum 3)"},
		{"Pulsar level 4", v1.SystemPulsar, level(4), 1, 3, 1, "1 of 3 bookies"},
		{"Pulsar ack quorum 3", v1.SystemPulsar, aq3, 3, 3, 3, "3 of 3 bookies"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eff, err := TranslateFor(tc.sys, StallVersions(tc.sys)[0], tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			w, ok := AckWaitOf(eff)
			if !ok || w.Healthy != tc.healthy || w.Of != tc.of || w.Least != tc.least || !strings.Contains(w.Description, tc.says) {
				t.Errorf("AckWaitOf = %+v, %v; want %d of %d, least %d, saying %q", w, ok, tc.healthy, tc.of, tc.least, tc.says)
			}
			if !strings.Contains(eff.Explanation, "An acknowledgement waits for "+w.Description+", as the replica-stall experiment measured on") {
				t.Errorf("explanation %q does not say what the acknowledgement waits for", eff.Explanation)
			}
		})
	}
	// A version the replica-stall experiment did not run: as configured.
	eff, _ := TranslateFor(v1.SystemKafka, "4.1.1", level(2))
	if !strings.Contains(eff.Explanation, "as configured: the replica-stall experiment measured Kafka [4.3.1] with 3 replicas only") {
		t.Errorf("Kafka 4.1.1's explanation: %q", eff.Explanation)
	}
}
