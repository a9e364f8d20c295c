package localrun

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/brokerres"
	"github.com/streambench/streambench-operator/internal/cost"
	"github.com/streambench/streambench-operator/internal/faults"
	"github.com/streambench/streambench-operator/internal/outcome"
	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/stats"
)

// recordedRepeat is what a coordinator returns of one repeat, as both
// modes hand it on (results.Input): 30 one-second intervals from start at
// 200 msg/s, down to 20 for two seconds from the eighth, with a broker's
// setup and a note.
func recordedRepeat(start time.Time) results.Input {
	rec := stats.NewRecorder("worker-0", stats.PhaseMeasure, start)
	var snaps []stats.Snapshot
	for s := range 30 {
		n := 200
		if s == 8 || s == 9 {
			n = 20
		}
		for i := range n {
			sent := start.Add(time.Duration(s)*time.Second + time.Duration(i)*time.Second/time.Duration(n))
			rec.RecordSend(sent, sent, 512)
			rec.RecordAck(sent, sent, sent.Add(time.Duration(2+s%3)*time.Millisecond), 512)
		}
		snaps = append(snaps, rec.Cut(start.Add(time.Duration(s+1)*time.Second)))
	}
	return results.Input{
		Run: "same", Namespace: "team", System: v1alpha1.SystemKafka, Snapshots: snaps,
		Workload:   v1alpha1.WorkloadSpec{Name: "w", Topics: 1, PartitionsPerTopic: 3, MessageSize: 512, ProducersPerTopic: 1, ProducerRate: 200},
		Durability: &v1alpha1.EffectiveDurability{RequestedLevel: 2, AchievedLevel: 2, Kafka: &v1alpha1.KafkaDurability{ReplicationFactor: 3}},
		Notes:      []string{"recorded for the modes' comparison"},
		// What the brokers used, as a sampler would report it: the cost
		// both modes compute from it must be the same too.
		BrokerResources: &brokerres.Report{Source: brokerres.SourceProc, Start: start, End: start.Add(30 * time.Second), Seconds: 30,
			Total: v1alpha1.BrokerResources{Source: brokerres.SourceProc, Seconds: 30, Brokers: 3,
				CPUCores: ptr.To(0.42), MemoryGiB: ptr.To(1.5), DiskWriteMBPerSec: ptr.To(0.31)}},
	}
}

// comparedPrices is a user's price model, given to both modes.
var comparedPrices = &cost.PriceModel{Name: "compared", Source: "this test", Date: "2026-12-02", Currency: "EUR",
	CoreHour: 0.04, GiBHour: 0.005, StorageGBMonth: 0.1, RetentionHours: 48, CrossZoneGB: 0.02, Zones: 3, ProjectToMBPerSec: 100}

// TestOutcomeSameInBothModes runs the same recorded repeats, faults and
// thresholds through the cluster path (the coordinator's ConfigMap,
// outcome.FromConfigMap and Collect as the controller calls them) and the local path
// (writeRepeat and conclude, as Run calls them), and requires the same
// summary.json, byte for byte: the run's and each repeat's. The cluster's
// is the ConfigMap's (compact JSON, as `streambench report` fetches it)
// indented as local mode writes its files.
func TestOutcomeSameInBothModes(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC)
	at := func(start time.Time, s float64) *metav1.MicroTime {
		m := metav1.NewMicroTime(start.Add(time.Duration(s * float64(time.Second))))
		return &m
	}
	ths := []v1alpha1.Threshold{{Figure: "publishLatencyMs.p99", Max: ptr.To(50.0)}}
	for _, c := range []struct {
		name   string
		starts []time.Time
	}{
		{"a run not repeated", []time.Time{t0}},
		{"a run of two repeats", []time.Time{t0, t0.Add(2 * time.Minute)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			repeated := len(c.starts) > 1
			var ins []results.Input
			var fs []v1alpha1.FaultStatus
			for i, s := range c.starts {
				ins = append(ins, recordedRepeat(s))
				r := v1alpha1.FaultRepeat(repeated, i)
				fs = append(fs,
					v1alpha1.FaultStatus{Index: 0, Repeat: r, Action: v1alpha1.FaultKill, Target: "broker-0", Resolved: "pid 42", Injected: true, InjectedAt: at(s, 8.2), ClearedAt: at(s, 10.5)},
					v1alpha1.FaultStatus{Index: 1, Repeat: r, Action: v1alpha1.FaultPause, Target: "broker-1", Message: "not injected: its time had not come"})
			}

			// The cluster: the coordinator's ConfigMap with the measured
			// phases' starts it records, finished by the controller's call.
			cm, _, err := results.BuildRepeatedConfigMap(ins)
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range c.starts {
				if cm.Data, err = faults.WithMeasureStart(cm.Data, i, s); err != nil {
					t.Fatal(err)
				}
			}
			in, err := outcome.FromConfigMap(cm, repeated, fs, ths)
			if err != nil {
				t.Fatal(err)
			}
			in.Prices = comparedPrices
			clusterOut, written, err := outcome.Collect(cm, in)
			if err != nil {
				t.Fatal(err)
			}

			// Local mode: each repeat's files, then the run's.
			dir := t.TempDir()
			run := &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "same"}}
			run.Spec.Thresholds = ths
			out := &Outcome{Run: run, Dir: dir}
			var done []outcome.Repeat
			var dirs []string
			for i, in := range ins {
				rel := ""
				if repeated {
					rel = results.RepeatDir(i + 1)
				}
				r := v1alpha1.FaultRepeat(repeated, i)
				var mine []v1alpha1.FaultStatus
				for _, f := range fs {
					if f.Repeat == r {
						mine = append(mine, f)
					}
				}
				one, err := writeRepeat(filepath.Join(dir, rel), in, c.starts[i], r, mine, comparedPrices)
				if err != nil {
					t.Fatal(err)
				}
				out.Faults = append(out.Faults, mine...)
				done, dirs = append(done, one.Repeat), append(dirs, rel)
			}
			o := Options{Stdout: io.Discard, Repeats: len(c.starts), prices: comparedPrices}
			if err := conclude(o, out, done, dirs); err != nil {
				t.Fatal(err)
			}

			same := func(key, file string) {
				t.Helper()
				var want bytes.Buffer
				if err := json.Indent(&want, []byte(written.Data[key]), "", "  "); err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(filepath.Join(dir, file))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want.Bytes()) {
					t.Errorf("%s: local mode's %d bytes differ from the cluster's %d:\n%s", file, len(got), want.Len(), firstDifference(got, want.Bytes()))
				}
			}
			same(results.KeySummary, results.KeySummary)
			if repeated {
				for i := range c.starts {
					same(results.RepeatKey(i+1, results.KeySummary), filepath.Join(results.RepeatDir(i+1), results.KeySummary))
				}
			}

			// What each mode says beyond the file: status.faults and the
			// thresholds' verdict.
			cf, _ := json.Marshal(clusterOut.Faults)
			lf, _ := json.Marshal(out.Faults)
			if !bytes.Equal(cf, lf) {
				t.Errorf("faults differ:\ncluster %s\nlocal   %s", cf, lf)
			}
			if clusterOut.Faults[0].Impact == nil || clusterOut.Faults[0].Impact.LowestRateFraction > 0.5 {
				t.Errorf("the kill has no dip to 10 %%: %+v", clusterOut.Faults[0].Impact)
			}
			if c := out.Summary.Cost; c == nil || c.Model.Name != "compared" || c.Costs.TotalPerHour.Value == nil || c.Efficiency.MBPerSecPerCoreUsed.Value == nil {
				t.Errorf("the run's cost is not priced by the given model: %+v", c)
			}
			if clusterOut.Thresholds.Message() != out.Thresholds.Message() || !out.Thresholds.Met() {
				t.Errorf("thresholds: cluster %q, local %q", clusterOut.Thresholds.Message(), out.Thresholds.Message())
			}
		})
	}
}

// firstDifference shows where a and b first differ, with some context.
func firstDifference(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(i-200, 0)
	return "local:   …" + string(a[from:min(i+200, len(a))]) + "\ncluster: …" + string(b[from:min(i+200, len(b))])
}
