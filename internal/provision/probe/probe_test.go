package probe

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/privileged"
)

func sp(s string) *string { return &s }

func run(system v1alpha1.System, mutate func(*v1alpha1.BenchmarkRun)) *v1alpha1.BenchmarkRun {
	r := &v1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "run-a", Namespace: "bench"},
		Spec:       v1alpha1.BenchmarkRunSpec{System: system, Cluster: v1alpha1.ClusterSpec{Managed: &v1alpha1.ManagedCluster{}}},
	}
	if mutate != nil {
		mutate(r)
	}
	return r
}

type volumeWant struct{ name, class, mount string }

func TestNodeJob(t *testing.T) {
	taint := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "streaming", Effect: corev1.TaintEffectNoSchedule}
	tests := []struct {
		name    string
		run     *v1alpha1.BenchmarkRun
		volumes []volumeWant
	}{
		{
			name:    "kafka, default class",
			run:     run(v1alpha1.SystemKafka, nil),
			volumes: []volumeWant{{"data", "", "/probe/data"}},
		},
		{
			name: "kafka JBOD: a second class gets its own probe, the same class does not",
			run: run(v1alpha1.SystemKafka, func(r *v1alpha1.BenchmarkRun) {
				s := &r.Spec.Cluster.Managed.Storage
				s.Data.StorageClassName = sp("local-nvme")
				s.AdditionalData = []v1alpha1.VolumeSpec{{StorageClassName: sp("local-nvme")}, {StorageClassName: sp("gp3")}}
				r.Spec.Cluster.Managed.Placement.Tolerations = []corev1.Toleration{taint}
			}),
			volumes: []volumeWant{{"data", "local-nvme", "/probe/data"}, {"data-2", "gp3", "/probe/data-2"}},
		},
		{
			name: "pulsar: journal and ledgers classes",
			run: run(v1alpha1.SystemPulsar, func(r *v1alpha1.BenchmarkRun) {
				s := &r.Spec.Cluster.Managed.Storage
				s.Journal.StorageClassName = sp("nvme-journal")
				s.Ledgers.StorageClassName = sp("nvme-ledgers")
			}),
			volumes: []volumeWant{{"journal", "nvme-journal", "/probe/journal"}, {"ledgers", "nvme-ledgers", "/probe/ledgers"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := NodeJob(tc.run, "img:1", "node-7", []string{"bookie", "broker"}, Volumes(tc.run))
			if j.Name != "run-a-probe-"+nodeHash("node-7") || j.Namespace != "bench" {
				t.Errorf("name %s/%s", j.Namespace, j.Name)
			}
			if j.Annotations[AnnotationNode] != "node-7" || strings.Join(DecodeRoles(j.Annotations[AnnotationRoles]), ",") != "bookie,broker" {
				t.Errorf("annotations %v", j.Annotations)
			}
			p := j.Spec.Template.Spec
			term := p.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
			if len(term) != 1 || term[0].MatchFields[0].Key != "metadata.name" || term[0].MatchFields[0].Values[0] != "node-7" {
				t.Errorf("not pinned to node-7 by name: %+v", term)
			}
			if p.NodeName != "" {
				t.Error("spec.nodeName bypasses the scheduler and so volume binding; use affinity")
			}
			if got := len(p.Tolerations); got != len(tc.run.Spec.Cluster.Managed.Placement.Tolerations) {
				t.Errorf("%d tolerations, want the brokers' %d", got, len(tc.run.Spec.Cluster.Managed.Placement.Tolerations))
			}
			c := p.Containers[0]
			if c.SecurityContext.Privileged != nil || *c.SecurityContext.AllowPrivilegeEscalation || *c.SecurityContext.RunAsUser == 0 {
				t.Error("the probe must run without privileges")
			}
			if c.TerminationMessagePolicy != corev1.TerminationMessageReadFile {
				t.Errorf("termination message policy %s, want File (the result)", c.TerminationMessagePolicy)
			}
			if len(p.Volumes) != len(tc.volumes) {
				t.Fatalf("%d volumes, want %d", len(p.Volumes), len(tc.volumes))
			}
			for i, w := range tc.volumes {
				v := p.Volumes[i]
				if v.Ephemeral == nil {
					t.Fatalf("volume %s is not an ephemeral PVC", v.Name)
				}
				spec := v.Ephemeral.VolumeClaimTemplate.Spec
				class := ""
				if spec.StorageClassName != nil {
					class = *spec.StorageClassName
				}
				if v.Name != w.name || class != w.class || c.VolumeMounts[i].MountPath != w.mount {
					t.Errorf("volume %d = %s class %q at %s, want %s class %q at %s", i, v.Name, class, c.VolumeMounts[i].MountPath, w.name, w.class, w.mount)
				}
				if !containsArg(c.Args, "--volume="+w.name+"="+w.mount) {
					t.Errorf("args %v lack --volume=%s=%s", c.Args, w.name, w.mount)
				}
			}
		})
	}
}

func containsArg(args []string, a string) bool {
	for _, x := range args {
		if x == a {
			return true
		}
	}
	return false
}

func TestWorkerPoolJob(t *testing.T) {
	r := run(v1alpha1.SystemKafka, func(r *v1alpha1.BenchmarkRun) {
		r.Spec.Cluster = v1alpha1.ClusterSpec{Existing: &v1alpha1.ExistingCluster{BootstrapServers: "k:9092"}}
		r.Spec.Workers.Placement.NodeSelector = map[string]string{"pool": "load"}
	})
	j := WorkerPoolJob(r, "img:1")
	p := j.Spec.Template.Spec
	if j.Name != "run-a-probe" || p.NodeSelector["pool"] != "load" {
		t.Errorf("job %s, nodeSelector %v", j.Name, p.NodeSelector)
	}
	if len(p.Volumes) != 1 || p.Volumes[0].EmptyDir == nil || p.Volumes[0].Name != "scratch" {
		t.Errorf("volumes %+v, want one emptyDir scratch", p.Volumes)
	}
}

func TestDropCacheJob(t *testing.T) {
	r := run(v1alpha1.SystemPulsar, func(r *v1alpha1.BenchmarkRun) { r.UID = "u-1" })
	j := DropCacheJob(r, "streambench-system", "img:1", "node-7")
	c := j.Spec.Template.Spec.Containers[0]
	if c.SecurityContext.Privileged == nil || !*c.SecurityContext.Privileged || c.Args[0] != "drop-page-cache" {
		t.Errorf("container %+v: want a privileged drop-page-cache", c)
	}
	if j.Spec.Template.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields[0].Values[0] != "node-7" {
		t.Error("not pinned to node-7")
	}
	if j.Name == JobName(r, "node-7") {
		t.Error("drop-cache and probe Jobs of a node share a name")
	}
	// In the operator's namespace, never the run's: its labels, not an
	// owner reference (none crosses namespaces), name the run.
	if j.Namespace != "streambench-system" || len(j.OwnerReferences) != 0 {
		t.Errorf("Job in %q with owners %v, want the operator's namespace and none", j.Namespace, j.OwnerReferences)
	}
	for _, l := range []map[string]string{j.Labels, j.Spec.Template.Labels} {
		if l[privileged.LabelRunUID] != "u-1" || l[privileged.LabelRunNamespace] != "bench" || l["streambench.io/run"] != "run-a" || l["streambench.io/role"] != RoleDropCache {
			t.Errorf("labels %v do not name the run by UID, namespace and name", l)
		}
	}
	other := run(v1alpha1.SystemPulsar, func(r *v1alpha1.BenchmarkRun) { r.Namespace, r.UID = "bench-2", "u-2" })
	if DropCacheJobName(other, "node-7") == j.Name {
		t.Errorf("runs run-a of bench and bench-2 share the Job %s", j.Name)
	}
}

// Each mid-run request gets Jobs of its own names, within a label value's
// 63 characters even for the longest run name.
func TestDropCacheJobFor(t *testing.T) {
	r := run(v1alpha1.SystemKafka, func(r *v1alpha1.BenchmarkRun) { r.Name, r.UID = strings.Repeat("r", 40), "u-1" })
	before := DropCacheJob(r, "ops", "img:1", "node-7")
	names := map[string]bool{before.Name: true}
	for _, seq := range []int32{1, 2, 999} {
		j := DropCacheJobFor(r, "ops", "img:1", "node-7", seq)
		if names[j.Name] {
			t.Errorf("request %d reuses the Job name %s", seq, j.Name)
		}
		names[j.Name] = true
		if len(j.Name) > 63 {
			t.Errorf("request %d: Job name %s has %d characters, more than a label value's 63", seq, j.Name, len(j.Name))
		}
		if j.Annotations[AnnotationDropSeq] != fmt.Sprint(seq) || j.Annotations[AnnotationNode] != "node-7" || j.Namespace != "ops" {
			t.Errorf("request %d: namespace %s annotations %v", seq, j.Namespace, j.Annotations)
		}
		if !*j.Spec.Template.Spec.Containers[0].SecurityContext.Privileged {
			t.Errorf("request %d: not privileged", seq)
		}
	}
	if DropCacheJobFor(r, "ops", "img:1", "node-7", 0).Name != before.Name {
		t.Error("request 0 is not the drop before the load")
	}
}

func TestTestbed(t *testing.T) {
	node := func(name string, p99 float64) v1alpha1.NodeProbe {
		return v1alpha1.NodeProbe{Node: name, CPUs: 8, Volumes: []v1alpha1.VolumeProbe{
			{Name: "journal", WriteBytes: 1, WriteMBPerSec: 900, FsyncLatencyMs: v1alpha1.FsyncLatency{Count: 100, P99: p99 / 2}},
			{Name: "ledgers", WriteBytes: 1, WriteMBPerSec: 700, FsyncLatencyMs: v1alpha1.FsyncLatency{Count: 100, P99: p99}},
		}}
	}
	pulsar := run(v1alpha1.SystemPulsar, func(r *v1alpha1.BenchmarkRun) {
		r.Spec.Cluster.Managed.Brokers = 1
		r.Spec.Cluster.Managed.Version = "4.0.7"
		r.Spec.Cluster.Managed.Storage.Ledgers.StorageClassName = sp("nvme")
	})
	tb := Testbed(pulsar, Plan{Volumes: Volumes(pulsar)}, []v1alpha1.NodeProbe{node("b", 3.5), node("a", 1.25), {Node: "c", Error: "probe Job failed: DeadlineExceeded"}})
	if tb.Scope != v1alpha1.TestbedBrokerNodes || tb.Nodes[0].Node != "a" {
		t.Errorf("scope %s, first node %s", tb.Scope, tb.Nodes[0].Node)
	}
	if tb.SlowestFsyncP99Ms == nil || *tb.SlowestFsyncP99Ms != 3.5 {
		t.Errorf("slowest fsync p99 %v, want 3.5", tb.SlowestFsyncP99Ms)
	}
	if tb.Nodes[0].Volumes[1].StorageClassName != "nvme" || tb.Nodes[0].Volumes[0].StorageClassName != "" {
		t.Errorf("classes %+v", tb.Nodes[0].Volumes)
	}
	wantTopology := v1alpha1.Topology{Brokers: 1, Bookies: 3, Version: "4.0.7", Components: []v1alpha1.ComponentEnvelope{
		{Component: "metadataStore", Replicas: 3}, {Component: "bookie", Replicas: 3}, {Component: "broker", Replicas: 1}}}
	if !reflect.DeepEqual(*tb.Topology, wantTopology) {
		t.Errorf("topology %+v\nwant     %+v", *tb.Topology, wantTopology)
	}
	if !strings.Contains(tb.Note, "1 of 3 nodes not measured ([c])") {
		t.Errorf("note %q does not say c was not measured", tb.Note)
	}

	existing := run(v1alpha1.SystemKafka, func(r *v1alpha1.BenchmarkRun) {
		r.Spec.Cluster = v1alpha1.ClusterSpec{Existing: &v1alpha1.ExistingCluster{BootstrapServers: "k:9092"}}
	})
	tb = Testbed(existing, Plan{Volumes: Volumes(existing)}, []v1alpha1.NodeProbe{{Node: "w", Volumes: []v1alpha1.VolumeProbe{{Name: "scratch", FsyncLatencyMs: v1alpha1.FsyncLatency{Count: 3, P99: 2}}}}})
	if tb.Scope != v1alpha1.TestbedWorkerNodes || !strings.Contains(tb.Note, "the brokers' disks were not measured") || tb.Topology != nil {
		t.Errorf("existing: %+v", tb)
	}

	// A plan that probes nothing: no nodes, no figures, its note alone
	// (not the existing cluster's "the figures are of a node of the
	// workers' pool": there are none).
	tb = Testbed(existing, Plan{Note: NoteProbeOff}, nil)
	if tb.Note != NoteProbeOff || len(tb.Nodes) != 0 || tb.SlowestFsyncP99Ms != nil {
		t.Errorf("existing, probe off: %+v", tb)
	}
	static := "storage not probed: class local-nvme has static volumes (kubernetes.io/no-provisioner), each one a bookie's disk; the probe would take one"
	tb = Testbed(pulsar, Plan{Note: static}, nil)
	if tb.Scope != v1alpha1.TestbedBrokerNodes || tb.Note != static || len(tb.Nodes) != 0 || tb.Topology == nil {
		t.Errorf("pulsar, static class: %+v", tb)
	}

	// A plan that leaves a volume out: its note comes first, then the
	// nodes not measured; the probed volume has the plan's resolved class.
	partial := Plan{Volumes: []Volume{{Name: "journal", StorageClassName: sp("standard")}}, Note: "ledgers not probed: class local-nvme has static volumes"}
	journal := v1alpha1.NodeProbe{Node: "a", Volumes: []v1alpha1.VolumeProbe{{Name: "journal", WriteBytes: 1, FsyncLatencyMs: v1alpha1.FsyncLatency{Count: 1, P99: 1}}}}
	tb = Testbed(pulsar, partial, []v1alpha1.NodeProbe{journal, {Node: "b", Error: "probe Job failed"}})
	if want := partial.Note + "; 1 of 2 nodes not measured ([b]): see nodes[].error"; tb.Note != want {
		t.Errorf("note %q, want %q", tb.Note, want)
	}
	if tb.Nodes[0].Volumes[0].StorageClassName != "standard" {
		t.Errorf("journal's class %q, want the plan's standard", tb.Nodes[0].Volumes[0].StorageClassName)
	}
}

func TestParseResult(t *testing.T) {
	n, err := ParseResult(`{"node":"n1","cpus":4,"volumes":[{"name":"data","writeMBPerSec":812.5,"writeBytes":268435456,"fsyncLatencyMs":{"count":2000,"appendBytes":4096,"p50":0.18,"p99":4.4,"p999":7.9,"max":8.1}}]}`)
	if err != nil || n.Node != "n1" || n.Volumes[0].FsyncLatencyMs.P99 != 4.4 {
		t.Errorf("ParseResult = %+v, %v", n, err)
	}
	if _, err := ParseResult("exec format error"); err == nil {
		t.Error("a message that is not JSON parsed")
	}
}
