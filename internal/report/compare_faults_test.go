package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	dur "github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/results"
)

func kill(index int32, target v1alpha1.FaultTarget, at float64) v1alpha1.FaultStatus {
	return v1alpha1.FaultStatus{Index: index, Action: v1alpha1.FaultKill, Target: target, Injected: true, InjectedAt: wall(at)}
}

func TestFaultsFlag(t *testing.T) {
	notInjected := func(f v1alpha1.FaultStatus, why string) v1alpha1.FaultStatus {
		f.Injected, f.InjectedAt, f.ClearedAt, f.Message = false, nil, nil, why
		return f
	}
	inRepeat := func(r int32, f v1alpha1.FaultStatus) v1alpha1.FaultStatus { f.Repeat = r; return f }
	cases := []struct {
		name string
		a, b []v1alpha1.FaultStatus
		// want are the words the flag must hold; nil: no flag.
		want []string
	}{
		{"neither had faults", nil, nil, nil},
		{"the same schedule", []v1alpha1.FaultStatus{pause(0), kill(1, "broker-2", 70)}, []v1alpha1.FaultStatus{pause(0), kill(1, "broker-2", 70)}, nil},
		{"the same fault 3 s later: the same schedule (whole seconds, an injection's moment)",
			[]v1alpha1.FaultStatus{kill(0, "broker-2", 50)}, []v1alpha1.FaultStatus{kill(0, "broker-2", 53)}, nil},
		{"the same fault 20 s later", []v1alpha1.FaultStatus{kill(0, "broker-2", 50)}, []v1alpha1.FaultStatus{kill(0, "broker-2", 70)},
			[]string{"[faults]", "fault #0 came at 50 s vs 70 s into the measured phase"}},
		{"faults against none", []v1alpha1.FaultStatus{pause(0)}, nil,
			[]string{"(#0 Pause broker-1 at 50 s vs no faults)", "fault #0 (Pause broker-1) only in a"}},
		{"another target", []v1alpha1.FaultStatus{kill(0, "broker-1", 50)}, []v1alpha1.FaultStatus{kill(0, "broker-2", 50)},
			[]string{"fault #0 is Kill broker-1 vs Kill broker-2"}},
		{"another action", []v1alpha1.FaultStatus{pause(0)}, []v1alpha1.FaultStatus{kill(0, "broker-1", 50)},
			[]string{"fault #0 is Pause broker-1 vs Kill broker-1"}},
		{"a fault not injected in one", []v1alpha1.FaultStatus{kill(0, "broker-2", 50)}, []v1alpha1.FaultStatus{notInjected(kill(0, "broker-2", 50), "process kafka-3 not running")},
			[]string{"fault #0 was not injected in b (process kafka-3 not running)"}},
		{"a fault missed alike in both: the same schedule as it happened",
			[]v1alpha1.FaultStatus{notInjected(kill(0, "broker-2", 50), "the run ended first")},
			[]v1alpha1.FaultStatus{notInjected(kill(0, "broker-2", 50), "the run ended first")}, nil},
		{"a repeat that missed its fault", []v1alpha1.FaultStatus{inRepeat(1, kill(0, "broker-2", 50)), inRepeat(2, kill(0, "broker-2", 50))},
			[]v1alpha1.FaultStatus{inRepeat(1, kill(0, "broker-2", 50)), inRepeat(2, notInjected(kill(0, "broker-2", 50), "the run ended first"))},
			[]string{"fault #0 was not injected in b (repeat 2: the run ended first)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var flags []Flag
			add := func(kind FlagKind, format string, args ...any) {
				flags = append(flags, Flag{Kind: kind, Message: strings.TrimSpace(sprintf(format, args...))})
			}
			faultsFlag(Named{Name: "a", Summary: faultRun(c.a...)}, Named{Name: "b", Summary: faultRun(c.b...)}, add)
			if c.want == nil {
				if len(flags) != 0 {
					t.Fatalf("flags %v, want none", flags)
				}
				return
			}
			if len(flags) != 1 {
				t.Fatalf("%d flags %v, want one", len(flags), flags)
			}
			for _, w := range c.want {
				if !strings.Contains(flags[0].String(), w) {
					t.Errorf("flag %q lacks %q", flags[0], w)
				}
			}
		})
	}
}

// compare puts the runs' faults side by side, fault by fault, with each
// fault's own loss (the run's total where the losses were not placed),
// and flags the schedules that differ.
func TestCompareFaults(t *testing.T) {
	a := faultRun(pause(0))
	b := faultRun(pause(0), kill(1, "broker-2", 80))
	// b's losses are placed: 2 sent in the pause's interval, 1 in the
	// kill's, so each fault has its own.
	b.Results.Lost = 3
	for i := range b.Series.Points {
		b.Series.Points[i].Lost = ptr.To(map[int]int64{7: 2, 10: 1}[i])
	}
	plain := faultRun()
	runs := []Named{{Name: "a", Summary: a}, {Name: "b", Summary: b}, {Name: "plain", Summary: plain}}
	tbl, err := Compare(runs)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		// a's are not placed: the run's total, said so.
		{"#0", "a", "Pause broker-1", "50 s", "0 %", "20 s", "800.00 corrected", "3 (whole run)"},
		// b's kill came 30 s after the pause, before 3 good intervals
		// in a row: neither is back within its intervals.
		{"#0", "b", "Pause broker-1", "50 s", "0 %", "not back by the end of its intervals", "800.00 corrected", "2"},
		{"#1", "b", "Kill broker-2", "80 s", "100 %", "not back by the end of its intervals", "5.00 corrected", "1"},
	}
	if len(tbl.Faults) != len(want) {
		t.Fatalf("fault rows %q, want %q", tbl.Faults, want)
	}
	for i := range want {
		if strings.Join(tbl.Faults[i], "|") != strings.Join(want[i], "|") {
			t.Errorf("row %d: %q, want %q", i, tbl.Faults[i], want[i])
		}
	}
	var kinds []string
	for _, f := range tbl.Flags {
		if f.Kind == FlagFaults {
			kinds = append(kinds, strings.Join(f.Runs, " vs "))
		}
	}
	if strings.Join(kinds, ", ") != "a vs b, a vs plain, b vs plain" {
		t.Errorf("faults flags on %q, want every pair (three schedules)", kinds)
	}
	text := tbl.Text()
	for _, w := range []string{"Faults (times in the measured phase; lost is the fault's own, by the interval its messages were sent in)", "dip (of the target rate)"} {
		if !strings.Contains(text, w) {
			t.Errorf("the text lacks %q:\n%s", w, text)
		}
	}
	var html bytes.Buffer
	if err := RenderCompare(&html, runs); err != nil {
		t.Fatal(err)
	}
	p := parsePage(t, html.Bytes())
	if got := p.tables["Faults"]; len(got) != 1+len(want) || got[3][2] != "Kill broker-2" {
		t.Errorf("the HTML's Faults table %q", got)
	}

	// Runs without faults have no fault table.
	tbl, err = Compare([]Named{{Name: "plain", Summary: plain}, {Name: "plain2", Summary: faultRun()}})
	if err != nil {
		t.Fatal(err)
	}
	if tbl.Faults != nil || strings.Contains(tbl.Text(), "Faults") {
		t.Errorf("runs without faults have a fault table: %q", tbl.Faults)
	}
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// TestToleranceFlag: a Kafka at RF 3, min ISR 2 and a Pulsar at ensemble 3
// on 3 bookies, both level 2, compared with a fault: flagged (one rides
// out a broker, the other waits for its bookie); with a fourth bookie
// they match. Without faults the tolerance is not compared.
func TestToleranceFlag(t *testing.T) {
	run := func(sys v1alpha1.System, bookies int32, fs ...v1alpha1.FaultStatus) *results.Summary {
		lvl := v1alpha1.Level2
		eff, err := dur.TranslateFor(sys, dur.StallVersions(sys)[0], v1alpha1.DurabilitySpec{Level: &lvl})
		if err != nil {
			t.Fatal(err)
		}
		s := faultRun(fs...)
		s.System, s.Durability = sys, &eff
		s.Testbed = &v1alpha1.Testbed{Topology: &v1alpha1.Topology{Brokers: 3, Bookies: bookies}}
		return s
	}
	flags := func(a, b *results.Summary) []Flag {
		var out []Flag
		toleranceFlag(Named{Name: "kafka", Summary: a}, Named{Name: "pulsar", Summary: b}, func(kind FlagKind, format string, args ...any) {
			out = append(out, Flag{Kind: kind, Message: sprintf(format, args...)})
		})
		return out
	}
	k := run(v1alpha1.SystemKafka, 0, kill(0, "broker-1", 50))
	got := flags(k, run(v1alpha1.SystemPulsar, 3, kill(0, "bookie-1", 50)))
	if len(got) != 1 || got[0].Kind != FlagTolerance ||
		!strings.Contains(got[0].Message, "kafka, 1 broker lost: RF 3, min.insync.replicas 2 (acks=all)") ||
		!strings.Contains(got[0].Message, "pulsar, 0 bookies lost: ensemble 3 on 3 bookies") {
		t.Errorf("Kafka RF 3 against Pulsar on 3 bookies: %v, want one [tolerance] flag saying both", got)
	}
	if got := flags(k, run(v1alpha1.SystemPulsar, 4, kill(0, "bookie-1", 50))); len(got) != 0 {
		t.Errorf("with a fourth bookie: %v, want no flag", got)
	}
	if got := flags(run(v1alpha1.SystemKafka, 0), run(v1alpha1.SystemPulsar, 3)); len(got) != 0 {
		t.Errorf("without faults: %v, want no flag", got)
	}
	unknown := run(v1alpha1.SystemPulsar, 3, kill(0, "bookie-1", 50))
	unknown.Testbed = nil
	if got := flags(k, unknown); len(got) != 1 || !strings.Contains(got[0].Message, "the failure tolerance of pulsar is not known") {
		t.Errorf("a Pulsar without its bookies' count: %v, want it said", got)
	}
}

// Between Kafka and Pulsar a broker and the bookie of its ordinal are the
// same failure (both store the data), so the matched twins' schedules
// are the same; a target of the same name stays the same fault, as
// before; within one system a broker is not a bookie.
func TestSameFailure(t *testing.T) {
	k, p := v1alpha1.SystemKafka, v1alpha1.SystemPulsar
	for _, c := range []struct {
		sa   v1alpha1.System
		ta   v1alpha1.FaultTarget
		sb   v1alpha1.System
		tb   v1alpha1.FaultTarget
		same bool
	}{
		{k, "broker-1", k, "broker-1", true},
		{k, "broker-1", p, "bookie-1", true},
		{p, "bookie-2", k, "broker-2", true},
		{k, "broker-1", p, "bookie-2", false},
		{k, "broker-1", p, "broker-1", true},
		{k, "broker-1", k, "bookie-1", false},
		{p, "broker-1", p, "bookie-1", false},
		{k, "leader", p, "bookie-0", false},
		{k, "controller-1", p, "bookie-1", false},
	} {
		if got := sameFailure(c.sa, c.ta, c.sb, c.tb); got != c.same {
			t.Errorf("%s %s vs %s %s: same %v, want %v", c.sa, c.ta, c.sb, c.tb, got, c.same)
		}
	}
}
