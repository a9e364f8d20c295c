package suite

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/report"
	"github.com/streambench/streambench-operator/internal/results"
)

func faultAt(action v1alpha1.FaultAction, target string, at time.Duration) v1alpha1.Fault {
	f := v1alpha1.Fault{Action: action, Target: v1alpha1.FaultTarget(target), At: metav1.Duration{Duration: at}}
	if action == v1alpha1.FaultPause {
		f.Duration = &metav1.Duration{Duration: 10 * time.Second}
	}
	return f
}

func withSchedules(s *v1alpha1.BenchmarkSuite, schedules ...v1alpha1.SuiteFaultSchedule) *v1alpha1.BenchmarkSuite {
	s.Spec.FaultSchedules = schedules
	return s
}

var (
	healthy   = v1alpha1.SuiteFaultSchedule{Name: "healthy"}
	killB1    = v1alpha1.SuiteFaultSchedule{Name: "kill-b1", Faults: []v1alpha1.Fault{faultAt(v1alpha1.FaultKill, "broker-1", time.Minute)}}
	pauseBk2  = v1alpha1.SuiteFaultSchedule{Name: "pause-bk2", Faults: []v1alpha1.Fault{faultAt(v1alpha1.FaultPause, "bookie-2", 30*time.Second)}}
	tooLate   = v1alpha1.SuiteFaultSchedule{Name: "late", Faults: []v1alpha1.Fault{faultAt(v1alpha1.FaultKill, "broker-1", 20*time.Minute)}}
	noBroker9 = v1alpha1.SuiteFaultSchedule{Name: "b9", Faults: []v1alpha1.Fault{faultAt(v1alpha1.FaultKill, "broker-9", time.Minute)}}
)

// A fault schedule is a dimension: every cell runs once per schedule,
// named after it, with the schedule's faults; without schedules the
// names and cells are as they were.
func TestPlanFaultSchedules(t *testing.T) {
	tests := []struct {
		name      string
		suite     *v1alpha1.BenchmarkSuite
		cells     []string
		schedules []string
	}{
		{"no schedules: no dimension", testSuite("m", managed(v1alpha1.SystemKafka, level(2))),
			[]string{"m-kafka-l2-maxtput", "m-kafka-l2-lat200k"}, []string{"", ""}},
		{"a baseline and a kill: each cell under each, beside each other",
			withSchedules(testSuite("m", managed(v1alpha1.SystemKafka, level(1), level(2))), healthy, killB1),
			[]string{"m-kafka-l1-maxtput-healthy", "m-kafka-l1-maxtput-kill-b1", "m-kafka-l1-lat200k-healthy", "m-kafka-l1-lat200k-kill-b1",
				"m-kafka-l2-maxtput-healthy", "m-kafka-l2-maxtput-kill-b1", "m-kafka-l2-lat200k-healthy", "m-kafka-l2-lat200k-kill-b1"},
			[]string{"healthy", "kill-b1", "healthy", "kill-b1", "healthy", "kill-b1", "healthy", "kill-b1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(tt.suite, twoWorkloads)
			if err != nil {
				t.Fatal(err)
			}
			var cells, scheds []string
			for _, c := range p.Cells {
				cells, scheds = append(cells, string(c.Name)), append(scheds, c.FaultSchedule)
			}
			if strings.Join(cells, " ") != strings.Join(tt.cells, " ") {
				t.Errorf("cells\n got %q\nwant %q", cells, tt.cells)
			}
			if strings.Join(scheds, ",") != strings.Join(tt.schedules, ",") {
				t.Errorf("schedules %q, want %q", scheds, tt.schedules)
			}
			if len(p.Clusters) != 1 {
				t.Errorf("%d clusters, want 1: a schedule is the cell's, not the cluster's", len(p.Clusters))
			}
		})
	}
}

func TestPlanFaultScheduleErrors(t *testing.T) {
	existing := v1alpha1.SuiteSystem{System: v1alpha1.SystemKafka, Durabilities: []v1alpha1.DurabilitySpec{level(2)},
		Cluster: v1alpha1.ClusterSpec{Existing: &v1alpha1.ExistingCluster{BootstrapServers: "k:9092"}}}
	short := []v1alpha1.ResolvedWorkload{{Name: "short", Spec: v1alpha1.WorkloadSpec{TestDurationMinutes: ptr.To(5.0)}}}
	tests := []struct {
		name      string
		suite     *v1alpha1.BenchmarkSuite
		workloads []v1alpha1.ResolvedWorkload
		want      []string
	}{
		{"a fault after a workload's measured phase",
			withSchedules(testSuite("m", managed(v1alpha1.SystemKafka, level(2))), healthy, tooLate), short,
			[]string{"spec.faultSchedules[1].faults[0].at", "spec.systems[0], kafka, with spec.workloads[0] short"}},
		{"a target the topology lacks",
			withSchedules(testSuite("m", managed(v1alpha1.SystemKafka, level(2))), noBroker9), short,
			[]string{"spec.faultSchedules[0].faults[0].target", "broker-9", "raise spec.systems[0].cluster.managed.brokers"}},
		{"a bookie on Kafka",
			withSchedules(testSuite("m", managed(v1alpha1.SystemKafka, level(2))), pauseBk2), short,
			[]string{"spec.faultSchedules[0].faults[0].target", "spec.systems[0], kafka"}},
		{"faults on an existing cluster without its consent",
			withSchedules(testSuite("m", existing), healthy, killB1), short,
			[]string{"spec.faultSchedules[1].faults", "allowDisruption"}},
		{"two schedules of one name",
			withSchedules(testSuite("m", managed(v1alpha1.SystemKafka, level(2))), healthy, healthy), short,
			[]string{"spec.faultSchedules[1].name", "spec.faultSchedules[0].name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.suite, tt.workloads)
			if err == nil {
				t.Fatal("planned, want an error")
			}
			t.Log(err)
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	// The same bookie pause is fine on Pulsar.
	if _, err := New(withSchedules(testSuite("m", managed(v1alpha1.SystemPulsar, level(2))), healthy, pauseBk2), short); err != nil {
		t.Errorf("a bookie pause on Pulsar: %v", err)
	}
}

// Each cell's run gets its schedule's faults, and on a cluster the suite
// deployed the consent and the selector of that cluster's pods; a
// healthy cell gets neither.
func TestChildRunFaults(t *testing.T) {
	for _, tt := range []struct {
		system   v1alpha1.System
		schedule v1alpha1.SuiteFaultSchedule
		selector map[string]string
	}{
		{v1alpha1.SystemKafka, killB1, map[string]string{"strimzi.io/cluster": "m-kafka"}},
		{v1alpha1.SystemPulsar, pauseBk2, map[string]string{"app": "pulsar", "release": "m-pulsar-jasync-pulsar"}},
	} {
		t.Run(string(tt.system), func(t *testing.T) {
			s := plannedSuite(t, managed(tt.system, level(2)))
			s.Spec.FaultSchedules = []v1alpha1.SuiteFaultSchedule{healthy, tt.schedule}
			p, err := New(s, s.Status.Workloads)
			if err != nil {
				t.Fatal(err)
			}
			clusters := s.Status.Clusters
			_, s.Status.Cells = Status(p)
			if len(s.Status.Cells) != 2 {
				t.Fatalf("%d cells, want one per schedule", len(s.Status.Cells))
			}
			for _, cell := range s.Status.Cells {
				run, err := ChildRun(s, cell, clusters[0])
				if err != nil {
					t.Fatal(err)
				}
				ex := run.Spec.Cluster.Existing
				if cell.FaultSchedule == healthy.Name {
					if run.Spec.Faults != nil || ex.Faults != nil {
						t.Errorf("%s: the healthy cell has faults %v or consent %v", cell.Name, run.Spec.Faults, ex.Faults)
					}
					continue
				}
				if len(run.Spec.Faults) != 1 || run.Spec.Faults[0].Target != tt.schedule.Faults[0].Target {
					t.Errorf("%s: faults %v, want the schedule's", cell.Name, run.Spec.Faults)
				}
				if ex.Faults == nil || !ex.Faults.AllowDisruption || ex.Faults.PodSelector == nil {
					t.Fatalf("%s: consent %+v, want allowed with a pod selector", cell.Name, ex.Faults)
				}
				if got := ex.Faults.PodSelector.MatchLabels; len(got) != len(tt.selector) || !equalMaps(got, tt.selector) {
					t.Errorf("%s: selector %v, want %v", cell.Name, got, tt.selector)
				}
				// The run's own copy: changing it leaves the suite's spec alone.
				run.Spec.Faults[0].Target = "broker-0"
				if s.Spec.FaultSchedules[1].Faults[0].Target == "broker-0" {
					t.Error("the child run's faults share the suite's spec")
				}
			}
		})
	}
}

// The tables set a cell's schedules side by side and name each: the
// Cells grid says each row's schedule, the Faults table their faults, and
// the [faults] flag between cells of different schedules (the suite's
// purpose) is left out with a note, not raised.
func TestTablesNameTheFaultSchedule(t *testing.T) {
	healthyRun := loadSummary(t, "kafka-ack-all")
	killed := loadSummary(t, "kafka-ack-all")
	killed.Faults = []v1alpha1.FaultStatus{{Index: 0, Action: v1alpha1.FaultKill, Target: "broker-1", Message: "process kafka-2 not running"}}
	s := &v1alpha1.BenchmarkSuite{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "ns"}}
	s.Spec.Workloads = []v1alpha1.SuiteWorkload{{Name: "lat"}}
	s.Status.Cells = []v1alpha1.SuiteCell{
		{Name: "m-kafka-l2-lat-healthy", System: v1alpha1.SystemKafka, Workload: "lat", RequestedLevel: 2, FaultSchedule: "healthy", Phase: v1alpha1.CellSucceeded},
		{Name: "m-kafka-l2-lat-kill-b1", System: v1alpha1.SystemKafka, Workload: "lat", RequestedLevel: 2, FaultSchedule: "kill-b1", Phase: v1alpha1.CellSucceeded},
	}
	sums := map[string]*results.Summary{"m-kafka-l2-lat-healthy": healthyRun, "m-kafka-l2-lat-kill-b1": killed}
	cmps, err := Compare([]string{"lat"}, s.Status.Cells, sums)
	if err != nil {
		t.Fatal(err)
	}
	if len(cmps) != 1 {
		t.Fatalf("%d tables, want one: the schedules of a cell share its table", len(cmps))
	}
	c := cmps[0]
	if strings.Join(c.FaultSchedules, ",") != "healthy,kill-b1" {
		t.Errorf("faultSchedules %q, want healthy,kill-b1", c.FaultSchedules)
	}
	for _, f := range c.Flags {
		if f.Kind == report.FlagFaults {
			t.Errorf("a faults flag between schedules the suite varies on purpose: %s", f)
		}
	}
	for _, want := range []string{"fault schedule", "m-kafka-l2-lat-kill-b1  kafka   l2          kill-b1", "1 faults flags between cells of different schedules are left out",
		"Faults (times in the measured phase"} {
		if !strings.Contains(c.Text, want) {
			t.Errorf("the table lacks %q:\n%s", want, c.Text)
		}
	}
	if strings.Contains(c.Text, "security") {
		t.Errorf("a suite without securities has a security column:\n%s", c.Text)
	}
	html := renderSuite(t, s, sums)
	for _, want := range []string{"<th>fault schedule</th>", "<td>kill-b1</td>", "faults flags between cells of different schedules are left out"} {
		if !strings.Contains(html, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

// A cell reaches the suite's cluster in existing mode, so its testbed has
// no topology; the tables take the one the suite deployed, and flag a
// Kafka that rides out a broker's loss beside a Pulsar of 3 bookies at
// ensemble 3, which rides out none ([tolerance]); with 4 bookies the two
// tolerate the same loss, and nothing is flagged.
func TestTablesFlagTheDeployedTolerance(t *testing.T) {
	for _, tt := range []struct {
		bookies int32
		flagged bool
	}{{3, true}, {4, false}} {
		t.Run(fmt.Sprintf("%d bookies", tt.bookies), func(t *testing.T) {
			pulsar := managed(v1alpha1.SystemPulsar, level(2))
			pulsar.Cluster.Managed.Bookies = tt.bookies
			s := withSchedules(testSuite("m", managed(v1alpha1.SystemKafka, level(2)), pulsar), killB1)
			p, err := New(s, twoWorkloads[:1])
			if err != nil {
				t.Fatal(err)
			}
			s.Spec.Workloads = []v1alpha1.SuiteWorkload{{Name: twoWorkloads[0].Name}}
			s.Status.Clusters, s.Status.Cells = Status(p)
			sums := map[string]*results.Summary{}
			for _, c := range s.Status.Cells {
				sum := loadSummary(t, map[v1alpha1.System]string{v1alpha1.SystemKafka: "kafka-ack-all", v1alpha1.SystemPulsar: "pulsar-ack-2"}[c.System])
				// As a cell in existing mode records it.
				sum.Testbed = &v1alpha1.Testbed{Scope: v1alpha1.TestbedWorkerNodes}
				sum.Faults = []v1alpha1.FaultStatus{{Index: 0, Action: v1alpha1.FaultKill, Target: "broker-1", Injected: true}}
				sums[c.Name] = sum
			}
			cm, err := BuildConfigMap(s, sums)
			if err != nil {
				t.Fatal(err)
			}
			var sr SuiteResults
			if err := json.Unmarshal([]byte(cm.Data[KeySuite]), &sr); err != nil {
				t.Fatal(err)
			}
			if len(sr.Comparisons) != 1 {
				t.Fatalf("%d tables, want 1", len(sr.Comparisons))
			}
			var tolerance []string
			for _, f := range sr.Comparisons[0].Flags {
				if f.Kind == report.FlagTolerance {
					tolerance = append(tolerance, f.Message)
				}
			}
			if tt.flagged != (len(tolerance) == 1) || (tt.flagged && !strings.Contains(tolerance[0], "0 bookies lost: ensemble 3 on 3 bookies")) {
				t.Errorf("tolerance flags %q, want flagged %v (a known tolerance on both sides)", tolerance, tt.flagged)
			}
			for _, c := range s.Status.Cells {
				var cell results.Summary
				if err := json.Unmarshal([]byte(cm.Data[CellKey(c.Name)]), &cell); err != nil {
					t.Fatal(err)
				}
				if cell.Testbed == nil || cell.Testbed.Topology == nil || cell.Testbed.Topology.Brokers != 3 {
					t.Errorf("cell %s: testbed %+v, want the deployed topology", c.Name, cell.Testbed)
				}
			}
			if sums[s.Status.Cells[0].Name].Testbed.Topology != nil {
				t.Errorf("the summaries given were changed")
			}
		})
	}
}
