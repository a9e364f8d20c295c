package durability

import (
	"fmt"
	"strings"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// Tolerance is how many of the nodes that store a run's data can be lost
// at once with the writes going on, without waiting for one to return.
// Two runs whose faults are compared tolerate the same failure alike only
// when their Losses are equal: "level 2 on both" is not that.
type Tolerance struct {
	Losses int32
	// Of is "brokers" (Kafka) or "bookies" (Pulsar).
	Of          string
	Description string
}

// ToleranceOf is the tolerance of a run's durability on its topology
// (nil: not known), and false when either does not tell it.
//
// Kafka, acks=all: a partition takes writes while min.insync.replicas of
// its RF replicas are in sync, so RF - min.insync.replicas brokers may go
// (TestRunKafkaKillLeader: one of three killed at RF 3, min ISR 2, the
// writes back after the session timeout). acks=1: the leader alone, so
// RF - 1.
//
// Pulsar: a ledger that loses a bookie replaces it in its ensemble with a
// bookie outside it; with none to spare the writes wait for the lost one
// to return, ack quorum or not (BookKeeper's ensemble change; our e2e
// suite saw 3 bookies at ensemble 3 stop writing until the deleted
// bookie's pod was back, issue 64). So bookies - ensemble may go. With
// delayEnsembleChange the ledger keeps writing at its ack quorum while
// write quorum - ack quorum of its bookies are gone, spare or not; what it
// then tolerates is the larger of the two (TestRunPulsarKillBookie: 3
// bookies at 3/3/2, one killed and kept down: no stall with it, the writes
// stopped for good without it; 4 bookies: no stall, the spare took the
// dead bookie's place). Two losses with both are not measured, so not
// counted.
func ToleranceOf(eff v1alpha1.EffectiveDurability, topology *v1alpha1.Topology) (Tolerance, bool) {
	switch {
	case eff.Kafka != nil:
		w, ok := AckWaitOf(eff)
		if !ok {
			return Tolerance{}, false
		}
		n := max(w.Of-w.Least, 0)
		t := Tolerance{Losses: n, Of: "brokers"}
		if eff.Kafka.Producer[KafkaProducerAcks] == "all" {
			t.Description = fmt.Sprintf("%s lost: RF %d, min.insync.replicas %d (acks=all): a partition takes writes while %d of its replicas are in sync", plural(n, "broker"), w.Of, w.Least, w.Least)
		} else {
			t.Description = fmt.Sprintf("%s lost: RF %d, acks=1: a partition takes writes while its leader lives, and a follower takes over", plural(n, "broker"), w.Of)
		}
		return t, true
	case eff.Pulsar != nil:
		if topology == nil || topology.Bookies <= 0 || eff.Pulsar.EnsembleSize <= 0 {
			return Tolerance{}, false
		}
		e, b := eff.Pulsar.EnsembleSize, topology.Bookies
		n := max(b-e, 0)
		t := Tolerance{Losses: n, Of: "bookies"}
		if q := eff.Pulsar.WriteQuorum - eff.Pulsar.AckQuorum; topology.DelayEnsembleChange && q > n {
			t.Losses = q
			t.Description = fmt.Sprintf("%s lost: ensemble %d on %d bookies with delayEnsembleChange: a ledger goes on writing at ack quorum %d of write quorum %d without replacing a lost bookie", plural(q, "bookie"), e, b, eff.Pulsar.AckQuorum, eff.Pulsar.WriteQuorum)
			return t, true
		}
		if n == 0 {
			t.Description = fmt.Sprintf("0 bookies lost: ensemble %d on %d bookies: a lost bookie can be replaced only by one outside the ensemble, and there is none, so the writes wait for it to return (ack quorum %d or not)", e, b, eff.Pulsar.AckQuorum)
		} else {
			t.Description = fmt.Sprintf("%s lost: ensemble %d on %d bookies: a ledger replaces a lost bookie with one of the %d outside its ensemble", plural(n, "bookie"), e, b, n)
		}
		return t, true
	}
	return Tolerance{}, false
}

func plural(n int32, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// DelayEnsembleChange says a Pulsar broker configuration turns the
// BookKeeper client's delayEnsembleChange on, in either spelling the
// chart takes (plain or PULSAR_PREFIX_). Pure.
func DelayEnsembleChange(broker map[string]string) bool {
	for _, k := range []string{PulsarBrokerDelayEnsembleChange, "PULSAR_PREFIX_" + PulsarBrokerDelayEnsembleChange} {
		if v, ok := broker[k]; ok {
			return strings.EqualFold(strings.TrimSpace(v), "true")
		}
	}
	return false
}
