package localrun

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/suite"
)

// cellsOf lays cells out as suite.Status does: "cluster/name" for a cell
// not repeated, "cluster/base#r" for repeat r of base, named base-r<r>.
func cellsOf(specs ...string) []v1alpha1.SuiteCell {
	var cells []v1alpha1.SuiteCell
	for _, spec := range specs {
		cluster, name, _ := strings.Cut(spec, "/")
		c := v1alpha1.SuiteCell{Cluster: cluster, Name: name}
		if base, r, ok := strings.Cut(name, "#"); ok {
			c.RepeatOf, c.Repeat, c.Name = base, int32(r[0]-'0'), base+"-r"+r
		}
		cells = append(cells, c)
	}
	return cells
}

func TestCrossClusterOrder(t *testing.T) {
	for _, tt := range []struct {
		name  string
		cells []v1alpha1.SuiteCell
		want  string
	}{
		{"not repeated: plan order",
			cellsOf("k/a", "k/b", "p/c"),
			"a b c"},
		{"one cluster, 2 cells × 3 repeats: the plan's own interleaving",
			cellsOf("k/a#1", "k/b#1", "k/b#2", "k/a#2", "k/a#3", "k/b#3"),
			"a-r1 b-r1 b-r2 a-r2 a-r3 b-r3"},
		{"2 clusters × 2 cells × 3 repeats: across the clusters",
			cellsOf("k/a#1", "k/b#1", "k/b#2", "k/a#2", "k/a#3", "k/b#3",
				"p/c#1", "p/d#1", "p/d#2", "p/c#2", "p/c#3", "p/d#3"),
			"a-r1 b-r1 c-r1 d-r1 d-r2 c-r2 b-r2 a-r2 a-r3 b-r3 c-r3 d-r3"},
		{"3 clusters × 1 cell × 4 repeats",
			cellsOf("k/a#1", "k/a#2", "k/a#3", "k/a#4", "p/b#1", "p/b#2", "p/b#3", "p/b#4", "q/c#1", "q/c#2", "q/c#3", "q/c#4"),
			"a-r1 b-r1 c-r1 c-r2 b-r2 a-r2 a-r3 b-r3 c-r3 c-r4 b-r4 a-r4"},
		{"a repeat whose round has no base cell still runs, last",
			cellsOf("k/a#1", "k/a#2", "p/b#2"),
			"a-r1 a-r2 b-r2"},
		{"no cells", nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, i := range crossClusterOrder(tt.cells) {
				got = append(got, tt.cells[i].Name)
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("order = %s\nwant    %s", strings.Join(got, " "), tt.want)
			}
		})
	}
}

// The repeats are matched by repeatOf and repeat, not by name: the
// planner shortens a long name with a hash, and a cell named as another's
// repeat would be would not be taken for it.
func TestCrossClusterOrderMatchesRepeatsNotNames(t *testing.T) {
	cells := []v1alpha1.SuiteCell{
		{Cluster: "k", Name: "long-x7f2a1", RepeatOf: "long", Repeat: 1},
		{Cluster: "k", Name: "long-9c3b0e", RepeatOf: "long", Repeat: 2},
		{Cluster: "p", Name: "long-r2", RepeatOf: "other", Repeat: 1},
		{Cluster: "p", Name: "other-r2", RepeatOf: "other", Repeat: 2},
	}
	var got []string
	for _, i := range crossClusterOrder(cells) {
		got = append(got, cells[i].Name)
	}
	if want := "long-x7f2a1 long-r2 other-r2 long-9c3b0e"; strings.Join(got, " ") != want {
		t.Errorf("order = %s, want %s", strings.Join(got, " "), want)
	}
}

// The sample's plan, as RunSuite orders it: Kafka and Pulsar take turns
// going first.
func TestCrossClusterOrderOfTheRepeatedQuickstartSample(t *testing.T) {
	s, err := LoadSuite(filepath.Join("..", "..", "config", "samples", "suite-quickstart-repeated-local.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := suite.New(s, s.Status.Workloads)
	if err != nil {
		t.Fatal(err)
	}
	s.Status.Clusters, s.Status.Cells = suite.Status(p)
	if mode, why := suiteMode(s, false); mode != clustersTogether || !strings.Contains(why, "all 2 clusters stand at once: an idle cluster beside the one measured") {
		t.Errorf("mode %v: %s", mode, why)
	}
	var got []string
	for _, i := range crossClusterOrder(s.Status.Cells) {
		c := s.Status.Cells[i]
		got = append(got, strings.TrimPrefix(c.Name, "quickstart-repeated-")+"@"+strings.TrimPrefix(c.Cluster, "quickstart-repeated-"))
	}
	want := "kafka-l2-lat2k-r1@kafka pulsar-l2-lat2k-r1@pulsar-jasync " +
		"pulsar-l2-lat2k-r2@pulsar-jasync kafka-l2-lat2k-r2@kafka " +
		"kafka-l2-lat2k-r3@kafka pulsar-l2-lat2k-r3@pulsar-jasync " +
		"pulsar-l2-lat2k-r4@pulsar-jasync kafka-l2-lat2k-r4@kafka " +
		"kafka-l2-lat2k-r5@kafka pulsar-l2-lat2k-r5@pulsar-jasync"
	if strings.Join(got, " ") != want {
		t.Errorf("order:\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
	if w := s.Status.Workloads[0].Spec; w.ProducerRate != 2000 || w.MessageSize != 1024 || w.PartitionsPerTopic != 16 || w.TestDurationMinutes == nil || *w.TestDurationMinutes != 1 || w.WarmupDurationMinutes == nil || *w.WarmupDurationMinutes != 0.25 {
		t.Errorf("the sample's workload is not make quickstart's: %+v", w)
	}
}

func TestSuiteMode(t *testing.T) {
	suiteOf := func(repeats int32, clusters ...bool) *v1alpha1.BenchmarkSuite {
		s := &v1alpha1.BenchmarkSuite{}
		s.Spec.Repeats = repeats
		for _, managed := range clusters {
			s.Status.Clusters = append(s.Status.Clusters, v1alpha1.SuiteCluster{Managed: managed})
		}
		return s
	}
	for _, tt := range []struct {
		name       string
		s          *v1alpha1.BenchmarkSuite
		oneAtATime bool
		want       clusterMode
		says       string
	}{
		{"not repeated", suiteOf(1, true, true), false, clustersOneAtATime, "each cluster's cells, then the next cluster"},
		{"repeats unset", suiteOf(0, true, true), false, clustersOneAtATime, "one at a time"},
		{"one cluster", suiteOf(3, true), false, clustersOneAtATime, "one at a time"},
		{"repeated on 2 clusters", suiteOf(3, true, true), false, clustersTogether, "all 2 clusters stand at once: an idle cluster beside the one measured"},
		{"an existing cluster is not started", suiteOf(2, true, false, true), false, clustersTogether, "across the 3 clusters (every cell in odd rounds, in reverse in even ones: A B, B A, …); the cost: all 2 local clusters stand at once"},
		{"one local cluster beside an existing one", suiteOf(2, false, true), false, clustersTogether, "the cost: the local cluster stands through the suite, idle while another is measured"},
		{"existing clusters only", suiteOf(2, false, false), false, clustersTogether, "the cost: no cost here: the clusters are existing ones"},
		{"opted out", suiteOf(3, true, true), true, clustersOneAtATime, "(--clusters-one-at-a-time): the 3 repeats alternate within each cluster only"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, why := suiteMode(tt.s, tt.oneAtATime)
			if got != tt.want || !strings.Contains(why, tt.says) {
				t.Errorf("mode %v (%s), want %v saying %q", got, why, tt.want, tt.says)
			}
		})
	}
}
