package localrun

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/coordinator"
	"github.com/streambench/streambench-operator/internal/faultimpact"
	"github.com/streambench/streambench-operator/internal/localbrokers"
	"github.com/streambench/streambench-operator/internal/results"
)

// bookieArm is one arm of the bookie experiment.
type bookieArm struct {
	name    string
	bookies int32
	// broker is added to the broker's settings (bookkeeper_* reach its
	// BookKeeper client).
	broker   map[string]string
	keepDown bool
}

// TestRunPulsarKillBookie is the bookie experiment (issue 64;
// docs/methodology.md, "One bookie lost"): at level 2 (ensemble 3, write
// quorum 3, ack quorum 2), a bookie of the first topic's ensemble is
// SIGKILLed 6 s into a 30 s phase at 1,000 msg/s, on one partition so one
// ledger carries every write, and kept down, so what the writes do without
// it is seen alone:
//
//   - 3 bookies: an ensemble change needs a bookie outside the ensemble,
//     and there is none;
//   - 4 bookies: the spare one takes the lost one's place;
//   - 3 bookies, the broker's BookKeeper client with delayEnsembleChange:
//     the writes go on at the ack quorum, the ensemble unchanged.
//
// Then 3 bookies again with the bookie restarted at once, as the kubelet
// restarts a bookie's container: the writes wait for its return.
func TestRunPulsarKillBookie(t *testing.T) {
	arms := []bookieArm{
		{name: "3 bookies, kept down", bookies: 3, keepDown: true},
		{name: "4 bookies, kept down", bookies: 4, keepDown: true},
		{name: "3 bookies, delayEnsembleChange, kept down", bookies: 3, keepDown: true,
			broker: map[string]string{"bookkeeper_delayEnsembleChange": "true"}},
		{name: "3 bookies, restarted", bookies: 3},
	}
	for _, arm := range arms {
		t.Run(arm.name, func(t *testing.T) {
			lr, sum := bookieFaultRun(t, arm)
			f := sum.Faults[0]
			im := f.Impact
			if !f.Injected || im == nil {
				t.Fatalf("fault %+v: want injected, with its impact", f)
			}
			a := lr.out.Accounting
			t.Logf("%s: lowest rate %.0f msg/s (%.2f of %g), recovered %v in %v s, longest wait %v ms, stall %+v, publish errors %d; acked %d, failed %d, unanswered %d, lost %d; %s",
				arm.name, im.LowestPublishRateMsgPerSec, im.LowestRateFraction, im.TargetRateMsgPerSec, im.Recovered, deref(im.RecoverySeconds),
				deref(im.LongestWaitMs), deref(im.Stall), im.PublishErrors, a.Acked, a.Failed, a.Unanswered, a.Lost, f.Message)
			// Level 2 loses nothing acknowledged whatever the bookies do;
			// a send the brokers never answered is not acknowledged, so
			// not lost either (unanswered; the load's end closing its
			// producer did not fail it: the Go client holds it where
			// Close does not reach).
			if a.Acked == 0 || a.Lost != 0 || a.NotConsumed != 0 {
				t.Errorf("acked %d, lost %d, not consumed %d: want acknowledged messages, none lost or left", a.Acked, a.Lost, a.NotConsumed)
			}
			killed := killedBookie(t, f.Resolved)
			ens := ensemblesAfter(t, f.Message)
			withKilled := func(e []string) bool { return slices.Contains(e, killed) }
			switch arm.name {
			case "3 bookies, kept down":
				// No bookie outside the ensemble: every ledger the broker
				// rolls to again has the dead bookie (or cannot be made),
				// and the writes never resume.
				if im.LowestRateFraction > 0.1 || im.Recovered || im.Stall == nil || !im.Stall.Unfinished {
					t.Errorf("impact %+v, stall %+v: want the writes stopped, never recovered, an unfinished stall", im, deref(im.Stall))
				}
				if a.Failed+a.Unanswered == 0 {
					t.Errorf("no send failed or unanswered: the sends held while no ledger could be written are neither acknowledged nor lost")
				}
				for _, e := range ens {
					if !withKilled(e) {
						t.Errorf("an ensemble without %s (%v) on 2 live bookies of 3: want none", killed, e)
					}
				}
			case "4 bookies, kept down":
				// The spare bookie replaces the lost one in the same
				// ledger, and the writes go on.
				goOn(t, im, a)
				if last := ens[len(ens)-1]; len(ens) < 2 || withKilled(last) {
					t.Errorf("ensembles %v: want the killed %s replaced", ens, killed)
				}
			case "3 bookies, delayEnsembleChange, kept down":
				// The writes go on at the ack quorum: the ensemble keeps
				// the dead bookie, and nothing waits.
				goOn(t, im, a)
				if len(ens) != 1 || !withKilled(ens[0]) {
					t.Errorf("ensembles %v: want one, unchanged, with %s", ens, killed)
				}
			case "3 bookies, restarted":
				// The writes wait for the bookie's return, at least.
				if f.ClearedAt == nil || im.Stall == nil || im.Stall.Unfinished || im.NotResumedSeconds != nil {
					t.Fatalf("fault %+v, stall %+v: want the bookie back, the writes stopped and then resumed", f, deref(im.Stall))
				}
				back := f.ClearedAt.Sub(f.InjectedAt.Time).Seconds()
				if im.Stall.Seconds < back-1 {
					t.Errorf("writes stopped %.1f s, but the bookie was back only %.1f s after the kill", im.Stall.Seconds, back)
				}
			}
		})
	}
}

// goOn asserts that the writes went on without the killed bookie: they
// never waited for it (it stayed down), and every send was answered. It
// does not ask for Recovered, which is the latency's return under twice
// the pre-fault p99: on a busy machine the p99 after the fault (acked by
// the two live bookies, in the ensemble's changed order) may stay above
// that though the writes never stopped, as CI saw on 2026-12-04 (pre-fault
// p99 45 ms and 90 ms; after, 350 ms and 656 ms).
func goOn(t *testing.T, im *v1alpha1.FaultImpact, a coordinator.Accounting) {
	t.Helper()
	if (im.Stall != nil && im.Stall.Unfinished) || im.NotResumedSeconds != nil || a.Failed+a.Unanswered != 0 {
		t.Errorf("impact %+v, stall %+v, failed %d, unanswered %d: want the writes going on, every send answered", im, deref(im.Stall), a.Failed, a.Unanswered)
	}
	// A stall that ended, with the bookie never back, did not wait for it:
	// the broker's ensemble change (or none) let the writes resume. It is
	// logged, not failed: a stop of the machine itself can be one.
	if im.Stall != nil {
		t.Logf("a stall of %.1f s that ended without the bookie's return: %s", im.Stall.Seconds, im.Stall.Explanation)
	}
}

// killedBookie is the bookie a fault's record names.
func killedBookie(t *testing.T, resolved string) string {
	t.Helper()
	m := regexp.MustCompile(`^(bookie-\d+) \(`).FindStringSubmatch(resolved)
	if m == nil || !strings.Contains(resolved, "; in the ensemble of ") {
		t.Fatalf("resolved %q: want a bookie of the first topic's ensemble", resolved)
	}
	return m[1]
}

// ensemblesAfter are the ensembles a bookie fault's message says the
// first topic's ledgers had from the fault on, in order.
func ensemblesAfter(t *testing.T, msg string) [][]string {
	t.Helper()
	var out [][]string
	for _, m := range regexp.MustCompile(`ledger \d+ on ([^;]+?) from \+`).FindAllStringSubmatch(msg, -1) {
		out = append(out, strings.Split(m[1], ", "))
	}
	if len(out) == 0 {
		t.Fatalf("message %q: no ensemble", msg)
	}
	return out
}

// bookieFaultRun runs the Pulsar sample at level 2 with the short
// workload on one partition, for 30 s measured in 2 s intervals, with a
// Kill of a bookie the first topic's ledger writes to, 6 s in.
func bookieFaultRun(t *testing.T, arm bookieArm) (localRun, results.Summary) {
	t.Helper()
	run, err := Load("../../config/samples/run-ack2-async-pulsar.yaml", "testdata/short-latency.yaml")
	if err != nil {
		t.Fatal(err)
	}
	level := v1alpha1.Level2
	run.Spec.Durability = &v1alpha1.DurabilitySpec{Level: &level}
	minutes := 0.5
	run.Spec.Workload.TestDurationMinutes = &minutes
	run.Spec.Workload.PartitionsPerTopic = 1
	m := run.Spec.Cluster.Managed
	m.Bookies = arm.bookies
	if len(arm.broker) > 0 {
		m.BrokerConfig = arm.broker
	}
	run.Spec.Faults = []v1alpha1.Fault{{Action: v1alpha1.FaultKill, Target: "bookie-0", At: metav1.Duration{Duration: 6 * time.Second}}}
	o := Options{Run: run, SnapshotInterval: 2 * time.Second, BrokerJVM: localbrokers.PulsarTestJVM, keepKilledDown: arm.keepDown,
		// Sends the brokers cannot answer fail at the load's end after
		// 10 s, not the worker's minute.
		flushTimeout: 10 * time.Second,
		// The first bookie of the ensemble: with 4 bookies one is outside it.
		aimBookie: func(t v1alpha1.FaultTarget, ensemble []int) v1alpha1.FaultTarget {
			if len(ensemble) == 0 {
				return t
			}
			return v1alpha1.FaultTarget("bookie-" + strconv.Itoa(ensemble[0]))
		}}
	lr := startRun(t, o).wait()
	if lr.err != nil {
		t.Fatalf("run: %v", lr.err)
	}
	// The standalone and the bookies.
	checkStopped(t, lr.out, 1+int(arm.bookies))
	sum := readSummary(t, lr.out.Dir)
	if len(sum.Faults) != 1 {
		t.Fatalf("summary.json faults %+v, want 1", sum.Faults)
	}
	b, _ := json.Marshal(sum.Faults[0])
	t.Logf("fault: %s", b)
	pts := faultimpact.FromSeries(sum.Series)
	for _, p := range pts {
		t.Logf("  %5.1f s  %6.0f msg/s  errors %d  p99 %v ms  max %v ms", p.StartSeconds, p.PublishRate, p.PublishErrors, deref(p.P99Ms), deref(p.MaxMs))
	}
	return lr, sum
}
