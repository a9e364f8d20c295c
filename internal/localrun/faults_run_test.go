package localrun

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver/kafka"
	"github.com/streambench/streambench-operator/internal/faultimpact"
	"github.com/streambench/streambench-operator/internal/faults"
	"github.com/streambench/streambench-operator/internal/localbrokers"
	"github.com/streambench/streambench-operator/internal/results"
)

// TestRunKafkaPause pauses broker-1 (process kafka-2) of the three-broker
// sample for 4 s, 3 s into the short workload's 15 s measured phase, and
// checks the record the run leaves: the process and pid hit, injected and
// cleared about 4 s apart, in summary.json. It runs as the command does
// (`streambench run -f FILE --workload FILE --local`): from files, no
// interval asked for, which must still measure in faults.Interval.
func TestRunKafkaPause(t *testing.T) {
	run, err := Load("../../config/samples/run-ack2-async.yaml", "")
	if err != nil {
		t.Fatal(err)
	}
	run.Spec.Faults = []v1alpha1.Fault{{Action: v1alpha1.FaultPause, Target: "broker-1",
		At: metav1.Duration{Duration: 3 * time.Second}, Duration: &metav1.Duration{Duration: 4 * time.Second}}}
	raw, err := yaml.Marshal(run)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "run-pause.yaml")
	if err := os.WriteFile(file, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	lr := startRun(t, Options{RunFile: file, WorkloadFile: "testdata/short-latency.yaml", SnapshotInterval: asTheCommand}).wait()
	if lr.err != nil {
		t.Fatalf("run: %v", lr.err)
	}
	// Three brokers and, for the faults, the controller of its own.
	checkStopped(t, lr.out, 4)
	fs := lr.out.Faults
	if len(fs) != 1 {
		t.Fatalf("faults %+v, want one", fs)
	}
	f := fs[0]
	if want := fmt.Sprintf("process kafka-2 (pid %d)", lr.out.BrokerPids[1]); f.Resolved != want || !f.Injected || f.Message != "" {
		t.Errorf("fault %+v: want %s injected, without a message", f, want)
	}
	if f.InjectedAt == nil || f.ClearedAt == nil {
		t.Fatalf("fault %+v: want injectedAt and clearedAt", f)
	}
	// Pause for 4 s: the clock of a busy host gives a second either way.
	if d := f.ClearedAt.Sub(f.InjectedAt.Time); d < 3*time.Second || d > 5*time.Second {
		t.Errorf("paused for %s, want about 4 s", d)
	}
	if e := lr.stderr.String(); !strings.Contains(e, "fault 0: Pause broker-1: SIGSTOP to kafka-2") || !strings.Contains(e, "SIGCONT to kafka-2") {
		t.Errorf("stderr does not say what was injected and cleared")
	}
	// The printed summary says what the fault did, as the report does.
	if want := fmt.Sprintf("faults      #0 Pause broker-1 (process kafka-2 (pid %d)) at ", lr.out.BrokerPids[1]); !strings.Contains(lr.stdout.String(), want) {
		t.Errorf("the printed summary has no line %q", want)
	}
	sum := readSummary(t, lr.out.Dir)
	if len(sum.Faults) != 1 || sum.Faults[0].Resolved != f.Resolved || !sum.Faults[0].Injected || sum.Faults[0].ClearedAt == nil {
		t.Errorf("summary.json faults %+v, want the run's record %+v", sum.Faults, f)
	}
	// The impact, from the measured phase's series (TestWithImpact has
	// the figures): placed where the pause came, at the workload's rate.
	if len(sum.Faults) == 1 {
		im := sum.Faults[0].Impact
		switch {
		case im == nil:
			t.Error("summary.json's fault has no impact")
		case im.InjectedSeconds < 2 || im.InjectedSeconds > 5 || im.ClearedSeconds == nil || *im.ClearedSeconds-im.InjectedSeconds < 3:
			t.Errorf("impact placed at %g..%v s of the measured phase, want about 3..7", im.InjectedSeconds, im.ClearedSeconds)
		case im.TargetRateMsgPerSec != 1000 || im.IntervalSeconds < faults.Interval.Seconds()/2 || im.IntervalSeconds > 2*faults.Interval.Seconds():
			t.Errorf("impact %+v: want the workload's 1000 msg/s and intervals of about %s (a fault run's, from a file as given whole)", im, faults.Interval)
		}
	}
}

// faultRun runs the three-broker sample (RF 3, min ISR 2) at level with
// the short workload's load (1,000 msg/s of 1 KB, 5 s of warm-up) for
// measured seconds, with the faults, and 2 s intervals so a fault's
// impact is read at a finer grain than the default 10 s. edit changes
// the run further; aim is Options.aimFault. It returns the run and
// summary.json as written.
func faultRun(t *testing.T, level v1alpha1.Level, measured float64, fs []v1alpha1.Fault,
	edit func(*v1alpha1.BenchmarkRun), aim func(v1alpha1.FaultTarget, kafka.PartitionState) v1alpha1.FaultTarget) (localRun, results.Summary) {
	t.Helper()
	return faultRunWith(t, level, measured, fs, edit, Options{aimFault: aim})
}

// faultRunWith is faultRun with the run's options (o.Run and
// o.SnapshotInterval are set here).
func faultRunWith(t *testing.T, level v1alpha1.Level, measured float64, fs []v1alpha1.Fault,
	edit func(*v1alpha1.BenchmarkRun), o Options) (localRun, results.Summary) {
	t.Helper()
	run, err := Load("../../config/samples/run-ack2-async.yaml", "testdata/short-latency.yaml")
	if err != nil {
		t.Fatal(err)
	}
	run.Spec.Durability = &v1alpha1.DurabilitySpec{Level: &level}
	minutes := measured / 60
	run.Spec.Workload.TestDurationMinutes = &minutes
	run.Spec.Faults = fs
	if edit != nil {
		edit(run)
	}
	o.Run, o.SnapshotInterval = run, 2*time.Second
	lr := startRun(t, o).wait()
	if lr.err != nil {
		// Seen in 1 of 6 leader kills before the Kafka driver's consumer
		// let franz-go's ErrGroupSession go (the killed broker was the
		// group's coordinator; the client rejoins by itself).
		t.Fatalf("run: %v", lr.err)
	}
	checkStopped(t, lr.out, 4)
	sum := readSummary(t, lr.out.Dir)
	if len(sum.Faults) != len(fs) {
		t.Fatalf("summary.json faults %+v, want %d", sum.Faults, len(fs))
	}
	for _, f := range sum.Faults {
		b, _ := json.Marshal(f)
		t.Logf("fault: %s", b)
	}
	a := lr.out.Accounting
	t.Logf("accounting: sent %d, acked %d, failed %d, received %d, lost %d, not consumed %d, duplicates %d",
		a.Sent, a.Acked, a.Failed, a.Received, a.Lost, a.NotConsumed, a.Duplicates)
	return lr, sum
}

// leaderResolved checks a leader fault's record names the broker, its
// process and pid and the partition: broker-<n> is kafka-<n+1>, the
// (n+1)th pid the run started.
func leaderResolved(t *testing.T, f v1alpha1.FaultStatus, pids []int) {
	t.Helper()
	m := regexp.MustCompile(`^broker-(\d) \(kafka-(\d), pid (\d+); leader of sb-[a-z0-9-]+-0-0\)$`).FindStringSubmatch(f.Resolved)
	if m == nil {
		t.Fatalf("resolved %q, want broker-<n> (kafka-<n+1>, pid N; leader of <first topic>-0)", f.Resolved)
	}
	n, _ := strconv.Atoi(m[1])
	node, _ := strconv.Atoi(m[2])
	pid, _ := strconv.Atoi(m[3])
	if node != n+1 || n >= len(pids) || pid != pids[n] {
		t.Errorf("resolved %q: broker-%d is kafka-%d, pid %d (the run's pids %v)", f.Resolved, n, n+1, pids[min(n, len(pids)-1)], pids)
	}
}

// TestRunKafkaKillLeader kills the leader of the first topic's partition
// 0, 6 s into 30 s of load at level 2 (acks=all, min ISR 2 of RF 3): the
// run goes on on two brokers, no acknowledged message is lost, and the
// record says which broker led, how far the rate fell and when the load
// was back.
//
// It is also the experiment behind the stall's explanation: the same kill
// with broker.session.timeout.ms at Kafka's 9000 and at 16000 (the
// controller's as the brokers'). If the writes wait for the controller to
// fence the dead leader, as the setting's documentation reads, the
// longest wait follows the setting: each run's stall matches the value it
// read from its brokers, and the second's is about 7 s longer. Seen on
// the shared 2-core machine: see killStall's log line ("stall"). The
// killed broker stays down here (keepKilledDown): started again at once,
// as local mode does, its return moved the stall (5.5 and 7.9 s at
// 9000, 16.9 s at 16000; docs/methodology.md), and the experiment is of
// the fencing alone. TestRunKafkaKillLeaderAcks1 checks the restart.
func TestRunKafkaKillLeader(t *testing.T) {
	var stalls [2]float64
	for i, timeout := range []string{"", "16000"} {
		var edit func(*v1alpha1.BenchmarkRun)
		want := 9.0 // Kafka's default broker.session.timeout.ms
		if timeout != "" {
			want = 16
			edit = func(run *v1alpha1.BenchmarkRun) {
				m := run.Spec.Cluster.Managed
				if m.BrokerConfig == nil {
					m.BrokerConfig = map[string]string{}
				}
				m.BrokerConfig["broker.session.timeout.ms"] = timeout
			}
		}
		lr, sum := faultRunWith(t, v1alpha1.Level2, 30, []v1alpha1.Fault{{Action: v1alpha1.FaultKill, Target: "leader",
			At: metav1.Duration{Duration: 6 * time.Second}}}, edit, Options{keepKilledDown: true})
		if i == 0 {
			killedLeader(t, lr, sum)
		}
		stalls[i] = killStall(t, sum, want)
	}
	// The window a setting explains is ±2.5-4 s wide (faultimpact's
	// Match*): the difference tells the setting's part apart from the
	// election's and the clients' on each side.
	if d := stalls[1] - stalls[0]; d < 4 || d > 10 {
		t.Errorf("the stall grew by %.1f s when broker.session.timeout.ms went from 9000 to 16000 ms (%.1f s, then %.1f s): want about 7 s", d, stalls[0], stalls[1])
	}
}

// killStall checks that a leader kill's stall is explained by the
// broker.session.timeout.ms its brokers said (want seconds), and returns
// the stall.
func killStall(t *testing.T, sum results.Summary, want float64) float64 {
	t.Helper()
	var read *results.BrokerSetting
	for i, s := range sum.FailureSettings {
		if s.Name == "broker.session.timeout.ms" {
			read = &sum.FailureSettings[i]
		}
	}
	if read == nil || read.Seconds == nil || *read.Seconds != want {
		t.Fatalf("failure settings %+v: want broker.session.timeout.ms read from the brokers as %g s", sum.FailureSettings, want)
	}
	im := sum.Faults[0].Impact
	if im == nil || im.LongestWaitMs == nil || im.Stall == nil {
		t.Fatalf("impact %+v: want a longest wait and a stall", im)
	}
	st := im.Stall
	t.Logf("stall: broker.session.timeout.ms %s: longest wait %.0f ms; %s", read.Value, *im.LongestWaitMs, st.Explanation)
	if st.Setting != "broker.session.timeout.ms" || st.SettingSeconds == nil || *st.SettingSeconds != want ||
		!strings.Contains(st.Explanation, "matches broker.session.timeout.ms "+read.Value) {
		t.Errorf("stall %+v: want it explained by broker.session.timeout.ms %s", st, read.Value)
	}
	return st.Seconds
}

// killedLeader checks the record and the recovery of a leader killed at
// level 2.
func killedLeader(t *testing.T, lr localRun, sum results.Summary) {
	t.Helper()
	a := lr.out.Accounting
	if a.Acked == 0 || a.Lost != 0 || sum.Results.Lost != 0 {
		t.Errorf("acked %d, lost %d (summary %d): want acknowledged messages and none lost at level 2", a.Acked, a.Lost, sum.Results.Lost)
	}
	f := sum.Faults[0]
	if !f.Injected || f.InjectedAt == nil || f.ClearedAt != nil || !strings.Contains(f.Message, "was not restarted: it stayed down") {
		t.Errorf("fault %+v: want injected, never cleared (kept down), and a message saying so", f)
	}
	leaderResolved(t, f, lr.out.BrokerPids)
	if e := lr.stderr.String(); !strings.Contains(e, "fault 0: Kill leader: SIGKILL to kafka-") || !strings.Contains(e, "; leader of sb-") {
		t.Errorf("stderr does not say which leader was killed")
	}
	im := f.Impact
	if im == nil {
		t.Fatal("no impact")
	}
	t.Logf("impact: lowest rate %.0f msg/s (%.2f of %g), recovery %v s (stable %v s, recovered %v, relapses %d), worst p99 %v ms against %v ms before, errors %d, notes %v",
		im.LowestPublishRateMsgPerSec, im.LowestRateFraction, im.TargetRateMsgPerSec, deref(im.RecoverySeconds), deref(im.StableRecoverySeconds),
		im.Recovered, im.Relapses, deref(im.WorstP99Ms), deref(im.PreFaultP99Ms), im.PublishErrors, im.Notes)
	// The partitions the dead broker led wait for the controller to fence
	// it (broker.session.timeout.ms) and elect another leader, so some
	// interval falls below the bar.
	if im.LowestRateFraction >= faultimpact.RecoveredRateFraction {
		t.Errorf("lowest rate %.2f of the target: the leader's death is not seen in the rate", im.LowestRateFraction)
	}
	// The load comes back on the two brokers left: the last
	// RecoveryIntervals intervals, together, are at the rate's bar. Not
	// each: the open-loop producers catch up in the next interval what a
	// busy moment delayed, and on a loaded host one healthy interval fell
	// to 937 of 1000 msg/s between 1062 and 1032 (CI, 87 % busy). Not the p99's
	// half of the bar: on this CPU-bound 2-core host an interval's p99
	// moves by 5x between healthy intervals (22 to 130 ms in one run),
	// so "at most twice the pre-fault median" failed after a recovery
	// the rate showed in 1 of 5 runs; the impact's recovery is logged
	// above (12 and 18 s in the others).
	pts := faultimpact.FromSeries(sum.Series)
	if len(pts) < faultimpact.RecoveryIntervals {
		t.Fatalf("%d measured intervals", len(pts))
	}
	var sent, seconds float64
	for _, p := range pts[len(pts)-faultimpact.RecoveryIntervals:] {
		if p.StartSeconds <= im.InjectedSeconds {
			t.Fatalf("the last %d intervals are not all after the kill at %.1f s: %+v", faultimpact.RecoveryIntervals, im.InjectedSeconds, pts)
		}
		sent += p.PublishRate * p.Seconds
		seconds += p.Seconds
	}
	if rate := sent / seconds; rate < faultimpact.RecoveredRateFraction*im.TargetRateMsgPerSec {
		t.Errorf("the publish rate is not back at the end: %.0f msg/s over the last %d intervals, after the kill at %.1f s: %+v",
			rate, faultimpact.RecoveryIntervals, im.InjectedSeconds, pts)
	}
	if im.Recovered && (im.RecoverySeconds == nil || im.StableRecoverySeconds == nil) {
		t.Errorf("recovered without the seconds it took: %+v", im)
	}
}

// TestRunKafkaKillLeaderAcks1 kills the leader as above at level 4
// (acks=1): the leader acknowledges before its followers have a message,
// so what the killed leader alone had is lost when a follower takes over.
// How much depends on the moment; what is asserted is that every
// acknowledged message is accounted for: received, lost or not consumed,
// the same in summary.json and printed.
func TestRunKafkaKillLeaderAcks1(t *testing.T) {
	lr, sum := faultRun(t, v1alpha1.Level4, 20, []v1alpha1.Fault{{Action: v1alpha1.FaultKill, Target: "leader",
		At: metav1.Duration{Duration: 4 * time.Second}}}, nil, nil)
	a := lr.out.Accounting
	f := sum.Faults[0]
	if !f.Injected || f.Impact == nil {
		t.Fatalf("fault %+v: want injected, with its impact", f)
	}
	leaderResolved(t, f, lr.out.BrokerPids)
	// Local mode starts the killed broker again at once, as the kubelet
	// restarts a killed container: cleared when it serves again, as a
	// new process that the run stopped with the others.
	m := regexp.MustCompile(`^local mode restarted kafka-\d at once, as the kubelet restarts a killed container: serving again \(pid (\d+)\) [\d.]+ s after the kill$`).FindStringSubmatch(f.Message)
	if f.ClearedAt == nil || m == nil {
		t.Fatalf("fault %+v: want it cleared once the broker was back, and a message saying so", f)
	}
	if pid, _ := strconv.Atoi(m[1]); slices.Contains(lr.out.BrokerPids, pid) || localbrokers.PidAlive(pid) {
		t.Errorf("the restarted broker's pid %d: want a new process (the run's first pids %v), stopped with the run", pid, lr.out.BrokerPids)
	}
	if im := f.Impact; im.ClearedSeconds == nil || *im.ClearedSeconds <= im.InjectedSeconds {
		t.Errorf("impact %+v: want the broker's return placed after the kill", im)
	}
	t.Logf("killed broker back after %.1f s; stall: %v", f.ClearedAt.Sub(f.InjectedAt.Time).Seconds(), f.Impact.Stall)
	if a.Sent == 0 || a.Acked != a.Sent-a.Failed || a.Lost < 0 || a.NotConsumed < 0 || len(a.Subscriptions) != 1 {
		t.Fatalf("accounting %+v: want sends, acked = sent - failed, one subscription", a)
	}
	s := a.Subscriptions[0]
	// A send that failed may still have been written (its answer lost),
	// and so received: received is between what was acknowledged and not
	// missed, and that plus the failed sends.
	if s.Expected != a.Acked || s.Lost != a.Lost || s.NotConsumed != a.NotConsumed ||
		s.Unique < s.Expected-s.Lost-s.NotConsumed || s.Unique > s.Expected-s.Lost-s.NotConsumed+a.Failed ||
		(a.Failed == 0 && s.Unique+s.Lost+s.NotConsumed != s.Expected) {
		t.Errorf("subscription %+v against acked %d, failed %d: acked = received + lost + not consumed does not hold", s, a.Acked, a.Failed)
	}
	if r := sum.Results; r.Lost != a.Lost || r.NotConsumed != a.NotConsumed {
		t.Errorf("summary.json lost %d, not consumed %d; the accounting %d, %d", r.Lost, r.NotConsumed, a.Lost, a.NotConsumed)
	}
	if !strings.Contains(lr.stdout.String(), fmt.Sprintf(", lost %d", a.Lost)) {
		t.Errorf("the summary printed does not show lost %d", a.Lost)
	}
	t.Logf("level 4, leader killed: %d of %d acknowledged messages lost", a.Lost, a.Acked)
}

// TestRunKafkaPauseFollower stops (SIGSTOP) a follower of the only
// partition for 4 s at level 2 (acks=all, min ISR 2 of RF 3), the leader
// running on. If acks=all waited for two of the three replicas, as "two
// acks" reads, the leader and the other follower would go on
// acknowledging; it waits for every replica in the ISR, and a stopped
// follower stays in the ISR until replica.lag.time.max.ms (30 s), so the
// sends wait out the pause: the corrected p99 of the pause's intervals is
// most of it. Seen on the shared 2-core machine: broker-2 paused 4 s
// while broker-1 led, worst corrected p99 3975 ms against 105 ms before,
// no acknowledgement at all in the pause's intervals (the log line
// "follower stall" prints it each run). So Kafka's level 2 is "every
// in-sync replica", 3 of 3 here, and not two acks.
func TestRunKafkaPauseFollower(t *testing.T) {
	var aimedAt kafka.PartitionState
	var aimed v1alpha1.FaultTarget
	follower := func(_ v1alpha1.FaultTarget, st kafka.PartitionState) v1alpha1.FaultTarget {
		aimedAt, aimed = st, v1alpha1.FaultTarget(fmt.Sprintf("broker-%d", st.Followers()[0]-1))
		return aimed
	}
	pause := 4 * time.Second
	lr, sum := faultRun(t, v1alpha1.Level2, 16, []v1alpha1.Fault{{Action: v1alpha1.FaultPause, Target: "broker-0",
		At: metav1.Duration{Duration: 6 * time.Second}, Duration: &metav1.Duration{Duration: pause}}},
		// One partition: its leader is never the paused broker, so any
		// wait is for the follower.
		func(r *v1alpha1.BenchmarkRun) { r.Spec.Workload.PartitionsPerTopic = 1 }, follower)
	a := lr.out.Accounting
	if a.Acked == 0 || a.Lost != 0 {
		t.Errorf("acked %d, lost %d: want none lost", a.Acked, a.Lost)
	}
	f := sum.Faults[0]
	if !f.Injected || f.ClearedAt == nil {
		t.Fatalf("fault %+v: want injected and cleared", f)
	}
	// The aim saw a leader and its ISR of three, and the paused process is
	// the follower it chose, not the leader.
	n := int(aimedAt.Leader)
	var id int
	if _, err := fmt.Sscanf(string(aimed), "broker-%d", &id); err != nil || len(aimedAt.ISR) != 3 || id+1 == n ||
		f.Resolved != fmt.Sprintf("process kafka-%d (pid %d)", id+1, lr.out.BrokerPids[id]) {
		t.Fatalf("paused %q (aimed at %s, partition 0 %+v), want a follower in an ISR of 3", f.Resolved, aimed, aimedAt)
	}
	im := f.Impact
	if im == nil || im.WorstP99Ms == nil || im.PreFaultP99Ms == nil {
		t.Fatalf("impact %+v: want the worst p99 and the p99 before", im)
	}
	t.Logf("follower stall: %s paused %s (leader broker-%d), worst %s p99 %.0f ms against %.1f ms before; lowest rate %.2f of the target",
		aimed, pause, n-1, im.LatencySeries, *im.WorstP99Ms, *im.PreFaultP99Ms, im.LowestRateFraction)
	if im.LatencySeries != "corrected" || *im.WorstP99Ms < 0.5*float64(pause.Milliseconds()) {
		t.Errorf("worst %s p99 %.0f ms during a %s follower pause: want at least half of it (acks=all waits for the in-sync follower)",
			im.LatencySeries, *im.WorstP99Ms, pause)
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return "none"
	}
	return *p
}

// readSummary reads the summary.json a local run wrote into dir.
func readSummary(t *testing.T, dir string) results.Summary {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, results.KeySummary))
	if err != nil {
		t.Fatal(err)
	}
	var sum results.Summary
	if err := json.Unmarshal(raw, &sum); err != nil {
		t.Fatal(err)
	}
	return sum
}
