package experiment

import (
	"testing"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// TestReadStall: which messages the verdict counts, on acks made up around
// a stall of 4 s from t0+3s: early ones held until it ends, or not.
func TestReadStall(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	from, to := t0.Add(3*time.Second), t0.Add(7*time.Second)
	msgs := func(held bool, slowShare float64) []ack {
		var as []ack
		for i := 0; i < 1000; i++ {
			send := t0.Add(time.Duration(i) * 10 * time.Millisecond)
			lat := 3 * time.Millisecond
			if send.Before(from) && float64(i%100) < 100*slowShare {
				lat = 2500 * time.Millisecond
			}
			acked := send.Add(lat)
			if held && !send.Before(from) && send.Before(to) {
				acked = to.Add(time.Duration(i%7) * time.Millisecond)
			}
			as = append(as, ack{send: send, acked: acked})
		}
		return as
	}
	for _, tc := range []struct {
		name  string
		acks  []ack
		sent  int
		want  Waits
		fails bool
	}{
		{"held until it ended", msgs(true, 0), 400, WaitsForStalled, false},
		{"not held", msgs(false, 0), 400, WaitsNotForStalled, false},
		{"not held, a busy machine", msgs(false, 0.1), 400, WaitsNotForStalled, false},
		{"too slow to tell", msgs(false, 0.5), 400, WaitsUnknown, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := readStall(tc.acks, tc.sent, t0, from, to)
			r.Cell = StallCell{System: v1alpha1.SystemKafka, Level: v1alpha1.Level2, Stall: 4 * time.Second}
			if r.Early != 200 {
				t.Errorf("early %d, want the 200 sent in the stall's first 2 s", r.Early)
			}
			v, err := r.Verdict()
			if v != tc.want || (err != nil) != tc.fails {
				t.Errorf("verdict %s (%v), want %s; held %d of %d, chance %.2f", v, err, tc.want, r.Held, r.Early, r.Chance)
			}
			if r.Unacked != 0 {
				t.Errorf("unacked %d", r.Unacked)
			}
		})
	}
}

// TestDroppedAfter: a stall past the bound reads as dropped only when the
// acks resumed during the stall and the brokers' own view shows the
// replica gone.
func TestDroppedAfter(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	pulsar := func(resumed time.Duration, before, during []int) StallResult {
		return StallResult{Cell: StallCell{System: v1alpha1.SystemPulsar, Level: v1alpha1.Level2, AckAll: true, Stall: 16 * time.Second, PastLag: true},
			From: t0, To: t0.Add(16 * time.Second), Resumed: resumed, EnsemblesBefore: before, EnsemblesDuring: during}
	}
	kafka := func(resumed time.Duration, during []int32) StallResult {
		return StallResult{Cell: StallCell{System: v1alpha1.SystemKafka, Level: v1alpha1.Level2, Stall: 24 * time.Second, PastLag: true},
			From: t0, To: t0.Add(24 * time.Second), Resumed: resumed, Follower: 2, ISRDuring: during}
	}
	for _, tc := range []struct {
		name string
		r    StallResult
		ok   bool
	}{
		{"pulsar: a new ensemble, acks resumed in the stall", pulsar(9*time.Second, []int{1}, []int{2}), true},
		{"pulsar: a new ledger", pulsar(9*time.Second, []int{1}, []int{1, 1}), true},
		{"pulsar: the ensemble unchanged", pulsar(9*time.Second, []int{1}, []int{1}), false},
		{"pulsar: acks only after the stall", pulsar(17*time.Second, []int{1}, []int{2}), false},
		{"pulsar: ensembles not read", pulsar(9*time.Second, []int{1}, nil), false},
		{"kafka: dropped from the ISR", kafka(15*time.Second, []int32{1, 3}), true},
		{"kafka: still in the ISR", kafka(15*time.Second, []int32{1, 2, 3}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, ok := tc.r.DroppedAfter()
			if ok != tc.ok || ok && d != tc.r.Resumed {
				t.Errorf("DroppedAfter = %s, %v; want %v (%s)", d, ok, tc.ok, tc.r.Reading())
			}
		})
	}
}
