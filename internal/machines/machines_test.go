package machines

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

func node(name, machineID, bootID string) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{MachineID: machineID, BootID: bootID}}}
}

const (
	bootA = "1a2b3c4d-0000-4000-8000-000000000001"
	bootB = "5e6f7a8b-0000-4000-8000-000000000002"
	bootC = "9c0d1e2f-0000-4000-8000-000000000003"
	machX = "0123456789abcdef0123456789abcdef"
	machY = "fedcba9876543210fedcba9876543210"
	machZ = "aaaabbbbccccddddeeeeffff00001111"
)

func TestOf(t *testing.T) {
	local := []string{"streambench-local", "streambench-local-2", "streambench-local-3"}
	tests := []struct {
		name  string
		names []string
		nodes []corev1.Node
		want  *v1alpha1.TestbedMachines
	}{
		{
			name:  "no node named",
			nodes: []corev1.Node{node("a", machX, bootA)},
		},
		{
			// The CI's local cluster: three kubelets on one host, one
			// /etc/machine-id and one kernel.
			name:  "three kubelets on one host",
			names: append(local, "streambench-local", ""),
			nodes: []corev1.Node{node("streambench-local", machX, bootA), node("streambench-local-2", machX, bootA), node("streambench-local-3", machX, bootA), node("elsewhere", machY, bootB)},
			want: &v1alpha1.TestbedMachines{Nodes: 3, Machines: 1,
				Hosts: []v1alpha1.TestbedHost{{Nodes: local, By: v1alpha1.HostBootID, ID: "1a2b3c4d"}},
				Note:  "3 nodes on 1 machine (streambench-local, streambench-local-2, streambench-local-3 share boot id 1a2b3c4d): their CPU, memory and disk figures are one machine's, measured 3 times, not 3 machines'"},
		},
		{
			// kind: each node container its own machine id, one kernel.
			name:  "kind's node containers",
			names: []string{"kind-worker", "kind-worker2", "kind-control-plane"},
			nodes: []corev1.Node{node("kind-worker", machX, bootA), node("kind-worker2", machY, bootA), node("kind-control-plane", machZ, bootA)},
			want: &v1alpha1.TestbedMachines{Nodes: 3, Machines: 1,
				Hosts: []v1alpha1.TestbedHost{{Nodes: []string{"kind-control-plane", "kind-worker", "kind-worker2"}, By: v1alpha1.HostBootID, ID: "1a2b3c4d"}},
				Note:  "3 nodes on 1 machine (kind-control-plane, kind-worker, kind-worker2 share boot id 1a2b3c4d): their CPU, memory and disk figures are one machine's, measured 3 times, not 3 machines'"},
		},
		{
			name:  "three machines",
			names: []string{"c", "a", "b"},
			nodes: []corev1.Node{node("a", machX, bootA), node("b", machY, bootB), node("c", machZ, bootC)},
			want:  &v1alpha1.TestbedMachines{Nodes: 3, Machines: 3, Note: "3 nodes on 3 machines: no two share a boot or machine id"},
		},
		{
			name:  "two machines, one carrying two nodes",
			names: []string{"a", "b", "c"},
			nodes: []corev1.Node{node("a", machX, bootA), node("b", machY, bootB), node("c", machX, bootA)},
			want: &v1alpha1.TestbedMachines{Nodes: 3, Machines: 2,
				Hosts: []v1alpha1.TestbedHost{{Nodes: []string{"a", "c"}, By: v1alpha1.HostBootID, ID: "1a2b3c4d"}},
				Note:  "3 nodes on 2 machines (a, c share boot id 1a2b3c4d): nodes on one machine share its CPUs, memory, disk and page cache, so their figures are that machine's, measured once per node"},
		},
		{
			// Machines cloned from an image that kept its machine id run
			// their own kernels.
			name:  "same machine id, different boot ids",
			names: []string{"a", "b"},
			nodes: []corev1.Node{node("a", machX, bootA), node("b", machX, bootB)},
			want: &v1alpha1.TestbedMachines{Nodes: 2, Machines: 2,
				Note: "2 nodes on 2 machines: no two share a boot or machine id; a and b share machine id 01234567 but not their boot id: separate machines (cloned from one image), counted apart"},
		},
		{
			// A kubelet that reports no boot id is joined by its machine id.
			name:  "machine id where a boot id is missing",
			names: []string{"a", "b", "c"},
			nodes: []corev1.Node{node("a", machX, ""), node("b", machX, bootA), node("c", machY, "")},
			want: &v1alpha1.TestbedMachines{Nodes: 3, Machines: 2,
				Hosts: []v1alpha1.TestbedHost{{Nodes: []string{"a", "b"}, By: v1alpha1.HostMachineID, ID: "01234567"}},
				Note:  "3 nodes on 2 machines (a, b share machine id 01234567): nodes on one machine share its CPUs, memory, disk and page cache, so their figures are that machine's, measured once per node"},
		},
		{
			name:  "a node without ids and a node that is gone",
			names: []string{"a", "b", "gone", "silent"},
			nodes: []corev1.Node{node("a", machX, bootA), node("b", machY, bootA), node("silent", "", "")},
			want: &v1alpha1.TestbedMachines{Nodes: 4, Machines: 3,
				Hosts: []v1alpha1.TestbedHost{{Nodes: []string{"a", "b"}, By: v1alpha1.HostBootID, ID: "1a2b3c4d"}},
				Note: "4 nodes on 3 machines (a, b share boot id 1a2b3c4d): nodes on one machine share its CPUs, memory, disk and page cache, so their figures are that machine's, measured once per node; " +
					"gone has no Node object: counted as a machine of its own; silent reports neither a machine id nor a boot id: counted as a machine of its own"},
		},
		{
			name:  "one node",
			names: []string{"a"},
			nodes: []corev1.Node{node("a", machX, bootA)},
			want:  &v1alpha1.TestbedMachines{Nodes: 1, Machines: 1, Note: "1 node on 1 machine"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Of(tt.names, tt.nodes)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Of:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestUnknown(t *testing.T) {
	if Unknown(nil, "x") != nil {
		t.Error("no node, yet a record")
	}
	got := Unknown([]string{"b", "a", "a"}, "the operator may not list nodes")
	want := &v1alpha1.TestbedMachines{Nodes: 2, Note: "whether the 2 nodes share machines is not known: the operator may not list nodes"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Unknown: %+v", got)
	}
	if Known(got) || Shared(got) || Count(got) != "2 nodes, machines unknown" {
		t.Errorf("Known %v Shared %v Count %q", Known(got), Shared(got), Count(got))
	}
}

func TestHelpers(t *testing.T) {
	m := Of([]string{"a", "b", "c"}, []corev1.Node{node("a", machX, bootA), node("b", machY, bootB), node("c", machZ, bootA)})
	if !Known(m) || !Shared(m) || Count(m) != "3 nodes on 2 machines" {
		t.Errorf("Known %v Shared %v Count %q", Known(m), Shared(m), Count(m))
	}
	if h := HostOf(m, "c"); h == nil || IDText(*h) != "boot id 1a2b3c4d" {
		t.Errorf("HostOf(c) = %+v", h)
	}
	if h := HostOf(m, "b"); h != nil {
		t.Errorf("b is on a machine of its own, HostOf says %+v", h)
	}
	if Count(nil) != "unknown" || Short("abc") != "abc" {
		t.Error("Count(nil) or Short of a short id")
	}
	tb := &v1alpha1.Testbed{Nodes: []v1alpha1.NodeProbe{{Node: "b"}, {Node: "a"}},
		Workers: &v1alpha1.WorkerPlacement{Pods: []v1alpha1.PodPlacement{{Pod: "w-0", Node: "c"}, {Pod: "coord", Node: "a"}}}}
	if got := NodesOf(tb, "d", "a"); !reflect.DeepEqual(got, []string{"a", "b", "c", "d"}) {
		t.Errorf("NodesOf = %v", got)
	}
	if got := NodesOf(nil, "d"); !reflect.DeepEqual(got, []string{"d"}) {
		t.Errorf("NodesOf(nil) = %v", got)
	}
}
