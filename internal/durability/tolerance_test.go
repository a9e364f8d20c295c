package durability

import (
	"strings"
	"testing"

	v1 "github.com/streambench/streambench-operator/api/v1alpha1"
)

// TestToleranceOf: the losses each side rides out, from the durability in
// effect and the topology: Kafka's level 2 and Pulsar's level 2 on three
// bookies are both "2 acks", yet Kafka goes on without one broker and
// Pulsar waits for its bookie; a fourth bookie makes them alike.
func TestToleranceOf(t *testing.T) {
	bookies := func(n int32) *v1.Topology { return &v1.Topology{Brokers: 3, Bookies: n} }
	for _, tc := range []struct {
		name   string
		sys    v1.System
		level  v1.Level
		topo   *v1.Topology
		losses int32
		ok     bool
		says   string
	}{
		{"Kafka level 2: RF 3, min ISR 2", v1.SystemKafka, 2, &v1.Topology{Brokers: 3}, 1, true, "1 broker lost: RF 3, min.insync.replicas 2 (acks=all)"},
		{"Kafka level 3: acks=1", v1.SystemKafka, 3, &v1.Topology{Brokers: 3}, 2, true, "2 brokers lost: RF 3, acks=1"},
		{"Kafka without a topology: the RF tells it", v1.SystemKafka, 2, nil, 1, true, ""},
		{"Pulsar level 2 on 3 bookies", v1.SystemPulsar, 2, bookies(3), 0, true, "0 bookies lost: ensemble 3 on 3 bookies: a lost bookie can be replaced only by one outside the ensemble, and there is none"},
		{"Pulsar level 2 on 4 bookies", v1.SystemPulsar, 2, bookies(4), 1, true, "1 bookie lost: ensemble 3 on 4 bookies"},
		{"Pulsar level 2 on 5 bookies", v1.SystemPulsar, 2, bookies(5), 2, true, "2 bookies lost"},
		{"Pulsar level 2 on 3 bookies, delayEnsembleChange", v1.SystemPulsar, 2, &v1.Topology{Bookies: 3, DelayEnsembleChange: true}, 1, true,
			"1 bookie lost: ensemble 3 on 3 bookies with delayEnsembleChange: a ledger goes on writing at ack quorum 2 of write quorum 3"},
		// The spares count when they are more than the quorums' margin.
		{"Pulsar level 2 on 5 bookies, delayEnsembleChange", v1.SystemPulsar, 2, &v1.Topology{Bookies: 5, DelayEnsembleChange: true}, 2, true, "2 bookies lost: ensemble 3 on 5 bookies"},
		{"Pulsar without the bookies' count", v1.SystemPulsar, 2, nil, 0, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eff, err := TranslateFor(tc.sys, StallVersions(tc.sys)[0], level(tc.level))
			if err != nil {
				t.Fatal(err)
			}
			tol, ok := ToleranceOf(eff, tc.topo)
			if ok != tc.ok || tol.Losses != tc.losses || !strings.Contains(tol.Description, tc.says) {
				t.Errorf("ToleranceOf = %+v, %v; want %d lost, %v, saying %q", tol, ok, tc.losses, tc.ok, tc.says)
			}
		})
	}
	if _, ok := ToleranceOf(v1.EffectiveDurability{}, bookies(3)); ok {
		t.Error("a durability of neither system has a tolerance")
	}
}

func TestDelayEnsembleChange(t *testing.T) {
	for _, tc := range []struct {
		broker map[string]string
		want   bool
	}{
		{nil, false},
		{map[string]string{"bookkeeper_delayEnsembleChange": "true"}, true},
		{map[string]string{"bookkeeper_delayEnsembleChange": " TRUE "}, true},
		{map[string]string{"PULSAR_PREFIX_bookkeeper_delayEnsembleChange": "true"}, true},
		{map[string]string{"bookkeeper_delayEnsembleChange": "false"}, false},
		{map[string]string{"delayEnsembleChange": "true"}, false},
	} {
		if got := DelayEnsembleChange(tc.broker); got != tc.want {
			t.Errorf("DelayEnsembleChange(%v) = %v, want %v", tc.broker, got, tc.want)
		}
	}
}
