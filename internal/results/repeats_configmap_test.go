package results

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/streambench/streambench-operator/internal/stats"
)

// repeatInput is a small repeat whose every publish takes publishUs.
func repeatInput(publishUs int64) Input {
	in := testInput(syntheticRun(1, 1, 1, 100, []phasePlan{{phase: stats.PhaseMeasure, intervals: 3, acked: 1000, publishUs: publishUs, e2eUs: 2 * publishUs}}))
	in.Owner = &OwnerRef{Name: "run-a", UID: "uid-1"}
	return in
}

// A repeated run's ConfigMap: summary.json is the aggregate (the median
// repeat's latency, each repeat's headline, the intervals), and each
// repeat's own results are under its keys, readable as a run's.
func TestBuildRepeatedConfigMap(t *testing.T) {
	ins := []Input{repeatInput(3000), repeatInput(1000), repeatInput(2000)}
	cm, sum, err := BuildRepeatedConfigMap(ins)
	if err != nil {
		t.Fatal(err)
	}
	if cm.Name != "run-a-results" || len(cm.OwnerReferences) != 1 || cm.OwnerReferences[0].UID != "uid-1" {
		t.Errorf("metadata %+v", cm.ObjectMeta)
	}
	back, err := Read(cm)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "median publish p50", back.Results.PublishLatencyMs.P50, 2)
	if len(back.Repeats) != 3 || back.Repeats[0].Dir != "repeat-1" {
		t.Fatalf("repeats %+v", back.Repeats)
	}
	near(t, "repeat 1's publish p50", back.Repeats[0].Results.PublishLatencyMs.P50, 3)
	iv, ok := back.Interval(mustFigure(t, "publishLatencyMs.p50"))
	if !ok || iv.N != 3 {
		t.Fatalf("interval of publish p50: %+v, %v", iv, ok)
	}
	near(t, "interval low", iv.Low, 1)
	near(t, "interval high", iv.High, 3)
	if mustJSON(t, sum.Results) != mustJSON(t, back.Results) {
		t.Errorf("returned summary differs from the one written")
	}
	for i, want := range []float64{3, 1, 2} {
		rep := &corev1.ConfigMap{Data: map[string]string{KeySummary: cm.Data[RepeatKey(i+1, KeySummary)]}}
		rs, err := Read(rep)
		if err != nil {
			t.Fatalf("repeat %d: %v", i+1, err)
		}
		near(t, fmt.Sprintf("repeat %d's own p50", i+1), rs.Results.PublishLatencyMs.P50, want)
		for _, k := range []string{KeyOMB} {
			if cm.Data[RepeatKey(i+1, k)] == "" {
				t.Errorf("repeat %d has no %s", i+1, k)
			}
		}
		for _, k := range []string{KeyHistograms, KeyIntervalHistograms} {
			if len(cm.BinaryData[RepeatKey(i+1, k)]) == 0 {
				t.Errorf("repeat %d has no %s", i+1, k)
			}
		}
	}
	// The run's own keys are the aggregate's: no OMB result or histogram
	// log stands for all the repeats.
	if _, ok := cm.Data[KeyOMB]; ok {
		t.Error("a repeated run has a top-level omb-result.json")
	}
	// A single repeat (the first, in progress) is written as a run.
	one, _, err := BuildRepeatedConfigMap(ins[:1])
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := one.Data[KeyOMB]; !ok || len(one.Data) != 2 {
		t.Errorf("one repeat: keys %v, want a run's", keys(one))
	}
	if _, _, err := BuildRepeatedConfigMap(nil); err == nil {
		t.Error("no repeats accepted")
	}
}

// Twenty repeats share the 1 MiB: ten minutes each at the series'
// full resolution fit their shares; an hour on 10,000 partitions does not
// (its whole-phase histogram log alone is over its share), and keeps its
// headline only, said in a note. The whole fits either way.
func TestRepeatedConfigMapFitsTwentyRepeats(t *testing.T) {
	tenMinutes := testInput(syntheticRun(4, 4, 1, 1000, []phasePlan{
		{phase: stats.PhaseWarmup, intervals: 6, acked: 20000, publishUs: 2000, e2eUs: 4000},
		{phase: stats.PhaseMeasure, intervals: 60, acked: 20000, publishUs: 2000, e2eUs: 4000}}))
	for _, tc := range []struct {
		name     string
		in       Input
		wantKept int
	}{
		{"ten minutes", tenMinutes, 20},
		{"an hour on 10,000 partitions", bigRun(), 0},
	} {
		ins := make([]Input, 20)
		for i := range ins {
			ins[i] = tc.in
		}
		cm, sum, err := BuildRepeatedConfigMap(ins)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		size, err := EncodedSize(cm)
		if err != nil {
			t.Fatal(err)
		}
		if size > MaxConfigMapBytes {
			t.Fatalf("%s: %d bytes, over the budget of %d", tc.name, size, MaxConfigMapBytes)
		}
		// Every summary kept leaves the outcome step its room.
		summaries := 1
		for i := 1; i <= 20; i++ {
			if _, has := cm.Data[RepeatKey(i, KeySummary)]; has {
				summaries++
			}
		}
		if free := MaxConfigMapBytes - size; free < summaries*OutcomeReserve {
			t.Errorf("%s: %d bytes free for %d summaries, want OutcomeReserve (%d) each", tc.name, free, summaries, OutcomeReserve)
		}
		kept := 0
		for i := 1; i <= 20; i++ {
			_, has := cm.Data[RepeatKey(i, KeySummary)]
			noted := false
			for _, n := range sum.Notes {
				noted = noted || strings.HasPrefix(n, fmt.Sprintf("repeat %d: its results do not fit", i))
			}
			if has == noted {
				t.Errorf("%s: repeat %d: keys kept %v, noted as left out %v; want exactly one", tc.name, i, has, noted)
			}
			if has {
				kept++
			}
		}
		t.Logf("%s: %d bytes, %d of 20 repeats with their own keys", tc.name, size, kept)
		if kept != tc.wantKept || len(sum.Repeats) != 20 {
			t.Errorf("%s: %d repeats kept their keys (want %d), %d headlines (want 20)", tc.name, kept, tc.wantKept, len(sum.Repeats))
		}
	}
}

// A write of fewer repeats' keys (a thinned interval log, a repeat left
// out) replaces every results key of the earlier write and keeps the
// page-cache handshake's.
func TestWriteReplacesEveryRepeatKey(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	ctx := context.Background()
	cm, _, err := BuildRepeatedConfigMap([]Input{repeatInput(1000), repeatInput(2000), repeatInput(3000)})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["pagecache-request"] = "{}"
	if err := Write(ctx, c, cm); err != nil {
		t.Fatal(err)
	}
	two, _, err := BuildRepeatedConfigMap([]Input{repeatInput(1000), repeatInput(2000)})
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(ctx, c, two); err != nil {
		t.Fatal(err)
	}
	var got corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKeyFromObject(two), &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys(&got) {
		if strings.HasPrefix(k, "repeat-3.") {
			t.Errorf("key %s of the earlier write survived", k)
		}
	}
	if _, ok := got.Data["pagecache-request"]; !ok {
		t.Error("the page-cache key was dropped")
	}
	var s Summary
	if err := json.Unmarshal([]byte(got.Data[KeySummary]), &s); err != nil || len(s.Repeats) != 2 {
		t.Errorf("summary after the second write: %d repeats (%v)", len(s.Repeats), err)
	}
}

func keys(cm *corev1.ConfigMap) []string {
	var out []string
	for k := range cm.Data {
		out = append(out, k)
	}
	for k := range cm.BinaryData {
		out = append(out, k)
	}
	return out
}

func mustFigure(t *testing.T, key string) Figure {
	t.Helper()
	for _, f := range Figures {
		if string(f.Key) == key {
			return f
		}
	}
	t.Fatalf("no figure %s", key)
	return Figure{}
}
