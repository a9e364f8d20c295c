package localrun

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver/kafka"
	"github.com/streambench/streambench-operator/internal/faultimpact"
	"github.com/streambench/streambench-operator/internal/localbrokers"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/stats"
)

func TestLocalNode(t *testing.T) {
	for _, tc := range []struct {
		target v1alpha1.FaultTarget
		want   int
		err    string
	}{
		{"broker-0", 1, ""},
		{"broker-2", 3, ""},
		{"controller-0", 1, ""},
		{"broker-3", 0, "there is no broker-3"},
		{"controller-1", 0, "no controller-1"},
		{"bookie-0", 0, "no bookie-0"},
		{"leader", 0, "looked up when the fault comes"},
		{"broker-x", 0, "not a fault target"},
	} {
		got, err := localNode(tc.target, 3)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: got %d, %v; want an error with %q", tc.target, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: got node %d, %v; want %d", tc.target, got, err, tc.want)
		}
	}
}

// fakeNodes are three processes kafka-1..3 (pids 101..103) that a SIGKILL
// ends; the signals sent are recorded in order.
type fakeNodes struct {
	mu    sync.Mutex
	dead  map[int]bool
	sent  []string
	fails map[int]bool
}

func newFakeNodes() *fakeNodes { return &fakeNodes{dead: map[int]bool{}, fails: map[int]bool{}} }

func (n *fakeNodes) find(_ context.Context, t v1alpha1.FaultTarget) (faultProc, error) {
	id, err := localNode(t, 3)
	if err != nil {
		return faultProc{}, err
	}
	pid := 100 + id
	return faultProc{name: "kafka-" + string(rune('0'+id)), pid: pid, alive: func() bool {
		n.mu.Lock()
		defer n.mu.Unlock()
		return !n.dead[pid]
	}}, nil
}

func (n *fakeNodes) signal(pid int, sig syscall.Signal) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.fails[pid] {
		return syscall.EPERM
	}
	n.sent = append(n.sent, sig.String()+" "+string(rune('0'+pid-100)))
	if sig == syscall.SIGKILL {
		n.dead[pid] = true
	}
	return nil
}

func (n *fakeNodes) signals() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.sent...)
}

func ms(d int) metav1.Duration { return metav1.Duration{Duration: time.Duration(d) * time.Millisecond} }

func TestFaultInjector(t *testing.T) {
	d := ms(60)
	fs := []v1alpha1.Fault{
		{Action: v1alpha1.FaultPause, Target: "broker-1", At: ms(40), Duration: &d}, // kafka-2, 40..100 ms
		{Action: v1alpha1.FaultKill, Target: "broker-2", At: ms(20)},                // kafka-3
		{Action: v1alpha1.FaultKill, Target: "broker-2", At: ms(60)},                // already dead
		{Action: v1alpha1.FaultKill, Target: "broker-0", At: ms(80)},                // the signal fails
		{Action: v1alpha1.FaultKill, Target: "broker-1", At: ms(10000)},             // after the run
	}
	n := newFakeNodes()
	n.fails[101] = true
	inj := startFaults(t.Context(), fs, 2, n.find, n.signal, t.Logf)
	inj.measureStarted(time.Now())
	time.Sleep(300 * time.Millisecond)
	got := inj.finish()

	if s, want := strings.Join(n.signals(), ", "), "killed 3, stopped (signal) 2, continued 2"; s != want {
		t.Errorf("signals: %s, want %s", s, want)
	}
	if len(got) != len(fs) {
		t.Fatalf("%d statuses, want %d", len(got), len(fs))
	}
	for i, st := range got {
		if st.Index != int32(i) || st.Repeat != 2 || st.Action != fs[i].Action || st.Target != fs[i].Target {
			t.Errorf("status %d: %+v does not name spec.faults[%d] of repeat 2", i, st, i)
		}
	}
	check := func(i int, injected, cleared bool, resolved, msg string) {
		t.Helper()
		st := got[i]
		if st.Injected != injected || (st.InjectedAt != nil) != injected || (st.ClearedAt != nil) != cleared {
			t.Errorf("fault %d: injected %v at %v, cleared at %v; want injected %v, cleared %v", i, st.Injected, st.InjectedAt, st.ClearedAt, injected, cleared)
		}
		if st.Resolved != resolved {
			t.Errorf("fault %d: resolved %q, want %q", i, st.Resolved, resolved)
		}
		if !strings.Contains(st.Message, msg) || (msg == "" && st.Message != "") {
			t.Errorf("fault %d: message %q, want one with %q", i, st.Message, msg)
		}
	}
	check(0, true, true, "process kafka-2 (pid 102)", "")
	check(1, true, false, "process kafka-3 (pid 103)", "stayed down")
	check(2, false, false, "process kafka-3 (pid 103)", "is not running")
	check(3, false, false, "process kafka-1 (pid 101)", "operation not permitted")
	check(4, false, false, "", "ended before the fault's time")
	if p := got[0]; p.ClearedAt.Time.Before(p.InjectedAt.Time) {
		t.Errorf("pause cleared at %s before it was injected at %s", p.ClearedAt, p.InjectedAt)
	}
}

func TestFaultInjectorRunEndsInsidePause(t *testing.T) {
	d := ms(60000)
	n := newFakeNodes()
	inj := startFaults(t.Context(), []v1alpha1.Fault{{Action: v1alpha1.FaultPause, Target: "broker-0", At: ms(0), Duration: &d}}, 0, n.find, n.signal, t.Logf)
	inj.measureStarted(time.Now())
	deadline := time.Now().Add(5 * time.Second)
	for len(n.signals()) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	got := inj.finish()
	// The process is let go, or the brokers' stop would wait for it.
	if s := strings.Join(n.signals(), ", "); s != "stopped (signal) 1, continued 1" {
		t.Errorf("signals: %s", s)
	}
	if st := got[0]; !st.Injected || st.ClearedAt != nil || !strings.Contains(st.Message, "ended inside the pause") {
		t.Errorf("status %+v: want injected, not cleared inside the run, and a message saying so", st)
	}
	if again := inj.finish(); len(again) != 1 || len(n.signals()) != 2 {
		t.Errorf("finish is not idempotent: %+v, signals %v", again, n.signals())
	}
}

func TestFaultInjectorNoMeasuredPhase(t *testing.T) {
	n := newFakeNodes()
	inj := startFaults(t.Context(), []v1alpha1.Fault{{Action: v1alpha1.FaultKill, Target: "broker-0", At: ms(0)}}, 0, n.find, n.signal, t.Logf)
	got := inj.finish()
	if len(n.signals()) != 0 || got[0].Injected || !strings.Contains(got[0].Message, "did not reach its measured phase") {
		t.Errorf("got %+v, signals %v; want nothing injected and why", got, n.signals())
	}
	var none *faultInjector
	none.measureStarted(time.Now())
	if none.finish() != nil || startFaults(t.Context(), nil, 0, n.find, n.signal, t.Logf) != nil {
		t.Error("a run without faults has an injector")
	}
}

// TestWithImpact reads a fault's impact from a series whose measured phase
// starts 2 s after the warm-up's first point: the fault's wall times are
// placed in the measured phase, not in the series' offsets.
func TestWithImpact(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	point := func(ph stats.Phase, off, rate, p99 float64) results.SeriesPoint {
		return results.SeriesPoint{Phase: ph, OffsetSeconds: off, Seconds: 2, PublishRateMsgPerSec: rate,
			PublishLatencyMs: &results.LatencyDetail{Count: 1, P99: p99}, CorrectedLatencyMs: &results.LatencyDetail{Count: 1, P99: p99}}
	}
	series := results.Series{Stride: 1, Points: []results.SeriesPoint{
		point(stats.PhaseWarmup, 0, 1000, 50), // not measured: neither the baseline nor the dip
		point(stats.PhaseMeasure, 2, 1000, 5), point(stats.PhaseMeasure, 4, 1000, 5),
		point(stats.PhaseMeasure, 6, 200, 4000), point(stats.PhaseMeasure, 8, 900, 900), // the fault's
		point(stats.PhaseMeasure, 10, 1000, 6), point(stats.PhaseMeasure, 12, 1000, 5), point(stats.PhaseMeasure, 14, 1000, 5),
		point(stats.PhaseMeasure, 16, 1000, 5),
		// The stop's sliver: 30 ms without an acknowledgement, not a
		// relapse.
		{Phase: stats.PhaseMeasure, OffsetSeconds: 18, Seconds: 0.03},
	}}
	measure := t0.Add(2 * time.Second) // the wall time of offset 2
	at := func(s float64) *metav1.MicroTime {
		return &metav1.MicroTime{Time: measure.Add(time.Duration(s * float64(time.Second)))}
	}
	fs := []v1alpha1.FaultStatus{
		{Index: 0, Action: v1alpha1.FaultPause, Target: "broker-1", Injected: true, InjectedAt: at(4.5), ClearedAt: at(7)},
		{Index: 1, Action: v1alpha1.FaultKill, Target: "leader", Message: "not injected: the lookup failed"},
	}
	got, err := faultimpact.FillSeries(series, 1000, nil, measure, fs)
	if err != nil {
		t.Fatal(err)
	}
	if fs[0].Impact != nil {
		t.Error("withImpact changed its input")
	}
	if got[1].Impact != nil {
		t.Errorf("a fault not injected has an impact: %+v", got[1].Impact)
	}
	im := got[0].Impact
	if im == nil {
		t.Fatal("the injected fault has no impact")
	}
	if im.InjectedSeconds != 4.5 || im.ClearedSeconds == nil || *im.ClearedSeconds != 7 {
		t.Errorf("placed at %g..%v, want 4.5..7 s into the measured phase", im.InjectedSeconds, im.ClearedSeconds)
	}
	if im.TargetRateMsgPerSec != 1000 || im.LowestRateFraction != 0.2 || im.LatencySeries != "corrected" {
		t.Errorf("impact %+v: want the target 1000, the dip to 0.2, on the corrected p99", im)
	}
	if im.PreFaultP99Ms == nil || *im.PreFaultP99Ms != 5 || im.WorstP99Ms == nil || *im.WorstP99Ms != 4000 {
		t.Errorf("p99 before %v, worst %v; want 5 (the warm-up's 50 left out) and 4000", im.PreFaultP99Ms, im.WorstP99Ms)
	}
	// Back from the interval at 8 s of the measured phase: 3.5 s after 4.5 s.
	if !im.Recovered || im.RecoverySeconds == nil || *im.RecoverySeconds != 3.5 || im.Relapses != 0 {
		t.Errorf("recovered %v after %v s, %d relapses; want true after 3.5, none (the last sliver is no interval)", im.Recovered, im.RecoverySeconds, im.Relapses)
	}

	if _, err := faultimpact.FillSeries(series, 0, nil, measure, fs); err == nil {
		t.Error("no error without a target rate")
	}
	if _, err := faultimpact.FillSeries(results.Series{}, 1000, nil, measure, fs); err == nil {
		t.Error("no error without a measured interval")
	}
	if got, err := faultimpact.FillSeries(results.Series{}, 1000, nil, measure, fs[1:]); err != nil || got[0].Impact != nil {
		t.Errorf("without an injected fault: %+v, %v; want nothing to compute and no error", got, err)
	}
}

// TestKafkaProcs resolves targets on three brokers and a controller of
// their own: leader from what the look-up says at the fault's time.
func TestKafkaProcs(t *testing.T) {
	node := func(id int, name string) localbrokers.KafkaNode {
		return localbrokers.KafkaNode{ID: id, Process: &localbrokers.Process{Name: name, Pid: 100 + id}}
	}
	ctl := node(4, "kafka-controller")
	k := &localbrokers.Kafka{Nodes: []localbrokers.KafkaNode{node(1, "kafka-1"), node(2, "kafka-2"), node(3, "kafka-3")}, Controller: &ctl}
	var leader int32 = 3
	var lookupErr error
	calls := 0
	lookup := func(context.Context) (string, kafka.PartitionState, error) {
		calls++
		return "sb-r-1-0", kafka.PartitionState{Leader: leader, Replicas: []int32{3, 1, 2}, ISR: []int32{3, 1, 2}}, lookupErr
	}
	find := kafkaProcs(k, lookup, nil)
	resolve := func(f findProc, target v1alpha1.FaultTarget) string {
		t.Helper()
		p, err := f(t.Context(), target)
		if err != nil {
			return "error: " + err.Error()
		}
		if p.resolved != "" {
			return p.resolved
		}
		return p.name
	}
	for _, tc := range []struct {
		target    v1alpha1.FaultTarget
		leader    int32
		lookupErr error
		want      string
	}{
		{"broker-1", 3, nil, "kafka-2"},
		{"controller-0", 3, nil, "kafka-controller"},
		{"leader", 3, nil, "broker-2 (kafka-3, pid 103; leader of sb-r-1-0-0)"},
		{"leader", 1, nil, "broker-0 (kafka-1, pid 101; leader of sb-r-1-0-0)"},
		{"leader", 7, nil, "error: sb-r-1-0-0 is led by node 7, which is not one of the 3 brokers local mode started"},
		{"leader", 3, errors.New("no answer"), "error: looking up the leader of the first topic's partition 0: no answer"},
	} {
		leader, lookupErr = tc.leader, tc.lookupErr
		if got := resolve(find, tc.target); got != tc.want {
			t.Errorf("%s (leader %d, look-up error %v): %q, want %q", tc.target, tc.leader, tc.lookupErr, got, tc.want)
		}
	}
	// Only leader asks the brokers.
	calls = 0
	resolve(find, "broker-0")
	if calls != 0 {
		t.Errorf("broker-0 looked the leader up %d times", calls)
	}
	if got := resolve(kafkaProcs(k, nil, nil), "leader"); !strings.Contains(got, "no way to ask") {
		t.Errorf("leader without a look-up: %q", got)
	}
	if got := resolve(kafkaProcs(nil, lookup, nil), "leader"); !strings.Contains(got, "only into the Kafka nodes it started") {
		t.Errorf("leader without local brokers: %q", got)
	}

	// A test's aim: the first follower of partition 0, whatever the spec
	// named.
	leader, lookupErr = 3, nil
	follower := func(_ v1alpha1.FaultTarget, st kafka.PartitionState) v1alpha1.FaultTarget {
		return v1alpha1.FaultTarget(fmt.Sprintf("broker-%d", st.Followers()[0]-1))
	}
	if got := resolve(aimed(find, lookup, follower), "broker-2"); got != "kafka-1" {
		t.Errorf("aimed at the first follower of [3 1 2] led by 3: %q, want kafka-1", got)
	}
}

// TestFaultInjectorLeaderNotFound: a look-up that fails fails the fault,
// with why, and the injector goes on to the next.
func TestFaultInjectorLeaderNotFound(t *testing.T) {
	n := newFakeNodes()
	find := func(ctx context.Context, tg v1alpha1.FaultTarget) (faultProc, error) {
		if tg == "leader" {
			return faultProc{}, errors.New("looking up the leader of the first topic's partition 0: no answer")
		}
		return n.find(ctx, tg)
	}
	inj := startFaults(t.Context(), []v1alpha1.Fault{{Action: v1alpha1.FaultKill, Target: "leader", At: ms(0)},
		{Action: v1alpha1.FaultKill, Target: "broker-2", At: ms(10)}}, 0, find, n.signal, t.Logf)
	inj.measureStarted(time.Now())
	deadline := time.Now().Add(5 * time.Second)
	for len(n.signals()) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	got := inj.finish()
	if got[0].Injected || got[0].Resolved != "" || !strings.Contains(got[0].Message, "not injected: looking up the leader") {
		t.Errorf("fault 0 %+v: want not injected, saying the look-up failed", got[0])
	}
	if !got[1].Injected || strings.Join(n.signals(), ",") != "killed 3" {
		t.Errorf("fault 1 %+v, signals %v: want broker-2 killed after the failed look-up", got[1], n.signals())
	}
}
