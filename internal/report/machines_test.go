package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/brokerres"
	"github.com/streambench/streambench-operator/internal/machines"
	"github.com/streambench/streambench-operator/internal/results"
)

// onMachines is the record internal/machines makes for nodes n1..n3 with
// the given boot ids.
func onMachines(boots ...string) *v1alpha1.TestbedMachines {
	var names []string
	var nodes []corev1.Node
	for i, b := range boots {
		name := []string{"n1", "n2", "n3"}[i]
		names = append(names, name)
		nodes = append(nodes, corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{BootID: b}}})
	}
	return machines.Of(names, nodes)
}

const boot1, boot2, boot3 = "1a2b3c4d-aaaa", "5e6f7a8b-bbbb", "9c0d1e2f-cccc"

// threeNodes gives a summary's testbed three probed nodes, n1..n3.
func threeNodes(s *results.Summary) {
	v := s.Testbed.Nodes[0].Volumes
	s.Testbed.Nodes = []v1alpha1.NodeProbe{
		{Node: "n1", Roles: []string{"broker"}, CPUModel: "Xeon", CPUs: 8, Volumes: v},
		{Node: "n2", Roles: []string{"broker"}, CPUModel: "Xeon", CPUs: 8, Volumes: v},
		{Node: "n3", Roles: []string{"broker"}, Error: "probe Job x failed"},
	}
}

// TestReportSaysNodesShareAMachine: a run whose nodes are one machine says
// so above its node table, names the shared id beside each node, and
// says it of the broker resources and of the busiest node's CPU verdict;
// a run on separate machines says that, quietly.
func TestReportSaysNodesShareAMachine(t *testing.T) {
	s := fairTwins()[0].Summary
	threeNodes(s)
	s.Testbed.Machines = onMachines(boot1, boot1, boot1)
	host := &brokerres.Host{Node: "n2", CPUs: 8, CPUBusyCores: ptr.To[float64](7)}
	brokers := 3.0
	host.JudgeCPU(&brokers)
	s.BrokerResources = &brokerres.Report{Source: brokerres.SourcePrometheus, Brokers: []brokerres.Broker{{Name: "kafka-0", CPUCores: ptr.To[float64](1)}}, Host: host, Notes: []string{"GC pause is the JVMs' pause time"}}

	var buf bytes.Buffer
	if err := Render(&buf, s, nil); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	for _, want := range []string{
		`<div class="warn" id="machines"><p>⚠ Nodes on one machine: 3 nodes on 1 machine (n1, n2, n3 share boot id 1a2b3c4d): their CPU, memory and disk figures are one machine&#39;s, measured 3 times, not 3 machines&#39;.</p></div>`,
		`<td class="code">n1 <small class="muted">boot id 1a2b3c4d</small></td>`,
		`<td class="code">n3 <small class="muted">boot id 1a2b3c4d</small></td><td>broker </td><td colspan="11" class="bad">not measured`,
		"⚠ The run&#39;s nodes share machines (3 nodes on 1 machine; see Testbed): brokers on one machine shared its CPUs",
		"node n2 shares one machine with n1, n3 (boot id 1a2b3c4d): its 8 CPUs and their busy share are that machine&#39;s, and &#34;everything else&#34; includes the pods of those nodes",
		"Host CPU-bound: the CPUs of node n2",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if n := s.BrokerResources.Notes; len(n) != 1 {
		t.Errorf("the report changed the summary's notes: %q", n)
	}

	s.Testbed.Machines = onMachines(boot1, boot2, boot3)
	buf.Reset()
	if err := Render(&buf, s, nil); err != nil {
		t.Fatal(err)
	}
	html = buf.String()
	if want := `<p class="muted" id="machines">Machines: 3 nodes on 3 machines: no two share a boot or machine id.</p>`; !strings.Contains(html, want) {
		t.Errorf("report lacks %q", want)
	}
	for _, not := range []string{"Nodes on one machine", "boot id 1a2b3c4d", "nodes share machines", "shares one machine"} {
		if strings.Contains(html, not) {
			t.Errorf("a run on separate machines says %q", not)
		}
	}

	// Not known, and not recorded at all.
	s.Testbed.Machines = machines.Unknown([]string{"n1", "n2", "n3"}, "the operator may not list nodes")
	buf.Reset()
	if err := Render(&buf, s, nil); err != nil {
		t.Fatal(err)
	}
	if want := "Machines: whether the 3 nodes share machines is not known: the operator may not list nodes."; !strings.Contains(buf.String(), want) {
		t.Errorf("report lacks %q", want)
	}
	s.Testbed.Machines = nil
	buf.Reset()
	if err := Render(&buf, s, nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), `id="machines"`) {
		t.Error("a run without a machines record has a machines line")
	}
}

// TestCompareMachines: compare says of each run whose nodes share a
// machine that its per-node figures are that machine's, shows every
// run's machines in its Testbed table, and flags a pair whose nodes share
// machines differently; unknown on one side is said, not flagged.
func TestCompareMachines(t *testing.T) {
	oneMachine := onMachines(boot1, boot1, boot1)
	twoMachines := onMachines(boot1, boot1, boot2)
	apart := onMachines(boot1, boot2, boot3)
	unknown := machines.Unknown([]string{"n1", "n2", "n3"}, "the operator may not list nodes")
	const kafkaShares = "kafka: 3 nodes on 1 machine (n1, n2, n3 share boot id 1a2b3c4d): its per-node figures (CPU, memory, disk, the busiest node's CPU) are the one machine's, not separate machines'"
	tests := []struct {
		name             string
		kafka, pulsar    *v1alpha1.TestbedMachines
		flag             string
		warnings         []string
		kafkaCell, pCell string
	}{
		{name: "neither recorded", kafkaCell: "not recorded", pCell: "not recorded"},
		{name: "both on one machine: like with like, said of each", kafka: oneMachine, pulsar: oneMachine,
			warnings:  []string{kafkaShares, "pulsar: 3 nodes on 1 machine (n1, n2, n3 share boot id 1a2b3c4d): its per-node figures (CPU, memory, disk, the busiest node's CPU) are the one machine's, not separate machines'"},
			kafkaCell: "3 nodes on 1 machine", pCell: "3 nodes on 1 machine"},
		{name: "one machine against three", kafka: oneMachine, pulsar: apart,
			flag:      "kafka vs pulsar: 3 nodes on 1 machine vs 3 nodes on 3 machines: kafka's nodes share machines, pulsar's do not",
			warnings:  []string{kafkaShares},
			kafkaCell: "3 nodes on 1 machine", pCell: "3 nodes on 3 machines"},
		{name: "shared differently", kafka: twoMachines, pulsar: oneMachine,
			flag:      "kafka vs pulsar: 3 nodes on 2 machines vs 3 nodes on 1 machine: the nodes share machines differently",
			warnings:  []string{"kafka: 3 nodes on 2 machines (n1, n2 share boot id 1a2b3c4d): the per-node figures (CPU, memory, disk, the busiest node's CPU) of nodes on one machine are that machine's, not separate machines'", "pulsar: 3 nodes on 1 machine"},
			kafkaCell: "3 nodes on 2 machines", pCell: "3 nodes on 1 machine"},
		{name: "unknown beside one machine", kafka: oneMachine, pulsar: unknown,
			warnings:  []string{kafkaShares, "pulsar: whether the 3 nodes share machines is not known: the operator may not list nodes: whether its per-node figures are separate machines' is not checked"},
			kafkaCell: "3 nodes on 1 machine", pCell: "3 nodes, machines unknown"},
		{name: "not recorded beside three machines", kafka: apart,
			warnings:  []string{"pulsar: which of its nodes share a machine is not recorded"},
			kafkaCell: "3 nodes on 3 machines", pCell: "not recorded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs := fairTwins()
			runs[0].Summary.Testbed.Machines, runs[1].Summary.Testbed.Machines = tt.kafka, tt.pulsar
			tbl, err := Compare(runs)
			if err != nil {
				t.Fatal(err)
			}
			var flags []string
			for _, f := range tbl.Flags {
				flags = append(flags, f.String())
				if f.Kind != FlagMachines {
					t.Errorf("unexpected flag %s", f)
				}
			}
			switch {
			case tt.flag == "" && len(flags) > 0:
				t.Errorf("flags %q, want none", flags)
			case tt.flag != "" && (len(flags) != 1 || !strings.HasPrefix(flags[0], "[machines] "+tt.flag)):
				t.Errorf("flags %q, want one starting %q", flags, tt.flag)
			}
			var got []string
			for _, w := range tbl.Warnings {
				if strings.Contains(w, "machine") {
					got = append(got, w)
				}
			}
			if len(got) != len(tt.warnings) {
				t.Errorf("machine warnings %q, want %d", got, len(tt.warnings))
			}
			for _, want := range tt.warnings {
				if !slices.ContainsFunc(got, func(w string) bool { return strings.HasPrefix(w, want) }) {
					t.Errorf("warnings %q lack %q", got, want)
				}
			}
			if c := tbl.Testbed[0][5]; c != tt.kafkaCell {
				t.Errorf("kafka's machines cell %q, want %q", c, tt.kafkaCell)
			}
			if c := tbl.Testbed[1][5]; c != tt.pCell {
				t.Errorf("pulsar's machines cell %q, want %q", c, tt.pCell)
			}
		})
	}

	// Text and HTML carry the column and the flag.
	runs := fairTwins()
	runs[0].Summary.Testbed.Machines, runs[1].Summary.Testbed.Machines = oneMachine, apart
	tbl, err := Compare(runs)
	if err != nil {
		t.Fatal(err)
	}
	text := tbl.Text()
	for _, want := range []string{"topology               machines", "3 nodes on 1 machine", "flag [machines] kafka vs pulsar", "warning: " + kafkaShares} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	var html bytes.Buffer
	if err := RenderCompare(&html, runs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<th>machines</th>", "<td>3 nodes on 1 machine</td>", "<td>3 nodes on 3 machines</td>", "kafka&#39;s nodes share machines, pulsar&#39;s do not"} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
}
