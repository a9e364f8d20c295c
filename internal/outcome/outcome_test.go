package outcome

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/faults"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/stats"
)

var t0 = time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)

// measured is a repeat's coordinator input: a measured phase from start
// of one-second intervals, rates[i] messages in the i-th, against a
// workload of 100 msg/s.
func measured(start time.Time, rates ...int) results.Input {
	rec := stats.NewRecorder("worker-0", stats.PhaseMeasure, start)
	var snaps []stats.Snapshot
	for s, n := range rates {
		for i := range n {
			sent := start.Add(time.Duration(s)*time.Second + time.Duration(i)*time.Second/time.Duration(n))
			rec.RecordSend(sent, sent, 1024)
			rec.RecordAck(sent, sent, sent.Add(3*time.Millisecond), 1024)
		}
		snaps = append(snaps, rec.Cut(start.Add(time.Duration(s+1)*time.Second)))
	}
	return results.Input{
		Run: "r", Namespace: "team", System: v1alpha1.SystemKafka, Snapshots: snaps,
		Workload: v1alpha1.WorkloadSpec{Name: "w", Topics: 1, PartitionsPerTopic: 1, MessageSize: 1024, ProducersPerTopic: 1, ProducerRate: 100},
	}
}

// steady is 20 s at 100 msg/s but for a dip to 10 in the fourth second.
func steady(start time.Time) results.Input {
	rates := make([]int, 20)
	for i := range rates {
		rates[i] = 100
	}
	rates[3] = 10
	return measured(start, rates...)
}

func summarize(t *testing.T, in results.Input) *results.Summary {
	t.Helper()
	s, err := results.Summarize(in)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// kill is fault index of status.faults repeat, injected at seconds
// after start (nil: not injected).
func kill(index, repeat int32, start time.Time, at *float64) v1alpha1.FaultStatus {
	f := v1alpha1.FaultStatus{Index: index, Repeat: repeat, Action: v1alpha1.FaultKill, Target: "broker-0"}
	if at == nil {
		f.Message = "not injected: its time had not come"
		return f
	}
	inj := metav1.NewMicroTime(start.Add(time.Duration(*at * float64(time.Second))))
	f.Injected, f.InjectedAt = true, &inj
	return f
}

func TestFinishRepeat(t *testing.T) {
	three := 3.0
	sum := summarize(t, steady(t0))
	bare := *sum
	bare.Series = results.Series{}
	cases := []struct {
		name   string
		r      Repeat
		repeat int32
		faults []v1alpha1.FaultStatus
		// want: the impact's injected second for each of faults (-1: no
		// impact), and the note a fault without figures has.
		inj  []float64
		note string
		// mine: how many faults the repeat's summary holds.
		mine int
	}{
		{name: "an injected fault gets its figures", r: Repeat{Summary: sum, MeasureStart: t0}, faults: []v1alpha1.FaultStatus{kill(0, 0, t0, &three)}, inj: []float64{3}, mine: 1},
		{name: "a fault not injected keeps none", r: Repeat{Summary: sum, MeasureStart: t0}, faults: []v1alpha1.FaultStatus{kill(0, 0, t0, nil)}, inj: []float64{-1}, mine: 1},
		{name: "another repeat's fault is left alone and not in the summary", r: Repeat{Summary: sum, MeasureStart: t0}, repeat: 1,
			faults: []v1alpha1.FaultStatus{kill(0, 1, t0, &three), kill(0, 2, t0, &three)}, inj: []float64{3, -1}, mine: 1},
		{name: "no recorded start: no figures, no note", r: Repeat{Summary: sum}, faults: []v1alpha1.FaultStatus{kill(0, 0, t0, &three)}, inj: []float64{-1}, mine: 1},
		{name: "unreadable results: a note", r: Repeat{Unreadable: errString("left out to fit"), MeasureStart: t0}, faults: []v1alpha1.FaultStatus{kill(0, 0, t0, &three)},
			inj: []float64{-1}, note: "no figures: the repeat's results are unreadable: left out to fit"},
		{name: "no measured interval: a note", r: Repeat{Summary: &bare, MeasureStart: t0}, faults: []v1alpha1.FaultStatus{kill(0, 0, t0, &three)},
			inj: []float64{-1}, note: "no figures: ", mine: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before, _ := json.Marshal(c.faults)
			got, faults := FinishRepeat(c.r, c.repeat, c.faults, nil)
			if after, _ := json.Marshal(c.faults); string(after) != string(before) {
				t.Error("the input's faults changed")
			}
			for i, want := range c.inj {
				im := faults[i].Impact
				switch {
				case want < 0 && c.note == "" && im != nil:
					t.Errorf("fault %d: impact %+v, want none", i, im)
				case want < 0 && c.note != "" && (im == nil || len(im.Notes) != 1 || !strings.HasPrefix(im.Notes[0], c.note)):
					t.Errorf("fault %d: impact %+v, want the note %q", i, im, c.note)
				case want >= 0 && (im == nil || im.InjectedSeconds != want):
					t.Errorf("fault %d: impact %+v, want one injected at %.0f s", i, im, want)
				}
			}
			if c.r.Summary == nil {
				if got != nil {
					t.Errorf("a summary %+v from none", got)
				}
				return
			}
			if len(got.Faults) != c.mine {
				t.Errorf("the summary holds %d faults, want %d", len(got.Faults), c.mine)
			}
			if len(c.r.Summary.Faults) != 0 {
				t.Error("the input's summary changed")
			}
		})
	}
}

type errString string

func (e errString) Error() string { return string(e) }

func TestFinish(t *testing.T) {
	three := 3.0
	s1, s2 := summarize(t, steady(t0)), summarize(t, steady(t0.Add(time.Minute)))
	agg, err := results.Aggregate([]*results.Summary{s1, s2}, []string{"repeat-1", "repeat-2"})
	if err != nil {
		t.Fatal(err)
	}
	fs := []v1alpha1.FaultStatus{kill(0, 2, t0.Add(time.Minute), &three), kill(0, 1, t0, &three), kill(1, 1, t0, nil)}
	ths := []v1alpha1.Threshold{{Figure: "publishMBPerSec", Min: ptr.To(1000.0)}}
	out, err := Finish(Input{
		Repeats:  []Repeat{{Summary: s1, MeasureStart: t0}, {Summary: s2, MeasureStart: t0.Add(time.Minute)}},
		Repeated: true, Aggregate: agg, Faults: fs, Thresholds: ths,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Faults) != 3 || out.Faults[0].Repeat != 2 || out.Faults[0].Impact == nil || out.Faults[1].Impact == nil || out.Faults[2].Impact != nil {
		t.Errorf("faults %+v: want the input's order, the injected ones with figures", out.Faults)
	}
	if len(out.Repeats[0].Faults) != 2 || len(out.Repeats[1].Faults) != 1 || out.Repeats[1].Faults[0].Repeat != 2 {
		t.Errorf("each repeat's summary holds its own faults: %+v, %+v", out.Repeats[0].Faults, out.Repeats[1].Faults)
	}
	if len(out.Summary.Faults) != 3 || out.Summary.Repeats == nil {
		t.Errorf("the run's summary is the aggregate with every fault: %+v", out.Summary.Faults)
	}
	if len(agg.Faults) != 0 {
		t.Error("the input's aggregate changed")
	}
	if out.Thresholds == nil || out.Thresholds.Met() {
		t.Errorf("thresholds %+v: want publishMBPerSec >= 1000 failed", out.Thresholds)
	}
	if m := out.Message(); !strings.HasPrefix(m, "published 0.1 MB/s, publish p99 ") || !strings.Contains(m, "; thresholds ") {
		t.Errorf("message %q", m)
	}

	one, err := Finish(Input{Repeats: []Repeat{{Summary: s1, MeasureStart: t0}}, Faults: []v1alpha1.FaultStatus{kill(0, 0, t0, &three)}})
	if err != nil || one.Summary != one.Repeats[0] || one.Thresholds != nil || len(one.Summary.Faults) != 1 || strings.Contains(one.Message(), "thresholds") {
		t.Errorf("a run not repeated: %+v, %v", one, err)
	}
	for name, in := range map[string]Input{
		"no repeat":                  {},
		"two repeats, no aggregate":  {Repeats: []Repeat{{Summary: s1}, {Summary: s2}}},
		"its only repeat unreadable": {Repeats: []Repeat{{Unreadable: errString("gone")}}},
	} {
		if _, err := Finish(in); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// read is FromConfigMap of a repeated run's cm, as the controller reads it.
func read(t *testing.T, cm *corev1.ConfigMap, fs []v1alpha1.FaultStatus) Input {
	t.Helper()
	in, err := FromConfigMap(cm, true, fs, nil)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// TestCollect: the cluster path's adapter reads what the coordinator
// wrote, writes the faults into the ConfigMap's summaries, and reading
// that back finishes the same.
func TestCollect(t *testing.T) {
	three := 3.0
	ins := []results.Input{steady(t0), steady(t0.Add(time.Minute))}
	cm, _, err := results.BuildRepeatedConfigMap(ins)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range []time.Time{t0, t0.Add(time.Minute)} {
		if cm.Data, err = faults.WithMeasureStart(cm.Data, i, s); err != nil {
			t.Fatal(err)
		}
	}
	fs := []v1alpha1.FaultStatus{kill(0, 1, t0, &three), kill(0, 2, t0.Add(time.Minute), &three)}
	out, written, err := Collect(cm, read(t, cm, fs))
	if err != nil {
		t.Fatal(err)
	}
	if written == nil || written == cm {
		t.Fatal("a run with faults writes a copy of its ConfigMap")
	}
	if strings.Contains(cm.Data[results.KeySummary], `"faults"`) {
		t.Error("the ConfigMap read was changed")
	}
	for _, key := range []string{results.KeySummary, results.RepeatKey(1, results.KeySummary), results.RepeatKey(2, results.KeySummary)} {
		if !strings.Contains(written.Data[key], `"faults"`) {
			t.Errorf("%s has no faults", key)
		}
	}
	if written.Data[faults.KeyMeasureStarts] != cm.Data[faults.KeyMeasureStarts] || string(written.BinaryData[results.KeyHistograms]) != string(cm.BinaryData[results.KeyHistograms]) {
		t.Error("keys other than the summaries changed")
	}
	if out.Faults[0].Impact == nil || out.Faults[1].Impact == nil {
		t.Errorf("faults %+v without figures", out.Faults)
	}
	again, rewritten, err := Collect(written, read(t, written, fs))
	if err != nil {
		t.Fatal(err)
	}
	if rewritten != nil || again.Faults[1].Impact.InjectedSeconds != out.Faults[1].Impact.InjectedSeconds {
		t.Error("collecting again (a retried reconcile, an operator restarted) finishes differently or writes the ConfigMap again")
	}

	// Without faults the summaries still gain their cost.
	_, costed, err := Collect(cm, read(t, cm, nil))
	if err != nil || costed == nil {
		t.Fatalf("a run without faults: %v, %v", costed, err)
	}
	if sum := costed.Data[results.KeySummary]; !strings.Contains(sum, `"cost":{"model":{"name":"gcp-n2-us-central1-on-demand"`) || strings.Contains(sum, `"faults"`) {
		t.Errorf("a run without faults: its summary has no default cost, or has faults: %.300s", sum)
	}
	one, _, err := results.BuildRepeatedConfigMap(ins[:1])
	if err != nil {
		t.Fatal(err)
	}
	if in, err := FromConfigMap(one, true, nil, nil); err != nil || len(in.Repeats) != 1 || in.Aggregate != nil || !in.Repeats[0].MeasureStart.IsZero() {
		t.Errorf("one repeat of a repeated run, no start recorded: %+v, %v", in, err)
	}
}
