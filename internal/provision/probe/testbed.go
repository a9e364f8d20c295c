package probe

import (
	"fmt"
	"sort"
	"strings"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/provision/pulsar"
	"github.com/streambench/streambench-operator/internal/provision/strimzi"
	"github.com/streambench/streambench-operator/internal/testbed"
)

// Testbed assembles a run's status.testbed from the plan and its probes:
// the scope and what it does not cover, the topology the spec deployed,
// each volume's StorageClass, and the slowest fsync p99 (the wide printer
// column). A plan that probes nothing gives no nodes, only its note.
func Testbed(run *v1alpha1.BenchmarkRun, plan Plan, nodes []v1alpha1.NodeProbe) v1alpha1.Testbed {
	classes := map[string]string{}
	for _, v := range plan.Volumes {
		classes[v.Name] = className(v.StorageClassName)
	}
	out := v1alpha1.Testbed{Scope: v1alpha1.TestbedBrokerNodes, Topology: TopologyOf(run)}
	if run.Spec.Cluster.Managed == nil {
		out.Scope = v1alpha1.TestbedWorkerNodes
		if plan.Probes() {
			out.Note = "existing cluster: the brokers' disks were not measured; the figures are of a node of the workers' pool (emptyDir)"
		}
	}
	if plan.Note != "" {
		out.Note = strings.TrimPrefix(out.Note+"; "+plan.Note, "; ")
	}
	for _, n := range nodes {
		n = *n.DeepCopy()
		for i := range n.Volumes {
			if out.Scope == v1alpha1.TestbedBrokerNodes {
				n.Volumes[i].StorageClassName = classes[n.Volumes[i].Name]
			}
		}
		out.Nodes = append(out.Nodes, n)
	}
	sort.Slice(out.Nodes, func(i, j int) bool { return out.Nodes[i].Node < out.Nodes[j].Node })
	if ms, _, ok := testbed.SlowestFsyncP99(out.Nodes); ok {
		out.SlowestFsyncP99Ms = &ms
	}
	var failed []string
	for _, n := range out.Nodes {
		if n.Error != "" {
			failed = append(failed, n.Node)
		}
	}
	if len(failed) > 0 {
		note := fmt.Sprintf("%d of %d nodes not measured (%v): see nodes[].error", len(failed), len(out.Nodes), failed)
		if out.Note != "" {
			note = out.Note + "; " + note
		}
		out.Note = note
	}
	return out
}

// TopologyOf is the shape the spec deployed: broker and bookie counts with
// their defaults, and the version (empty: the Strimzi or chart default).
// An existing cluster's shape is not known.
func TopologyOf(run *v1alpha1.BenchmarkRun) *v1alpha1.Topology {
	m := run.Spec.Cluster.Managed
	if m == nil {
		return nil
	}
	t := &v1alpha1.Topology{Brokers: m.BrokersOrDefault(), Version: m.Version}
	if run.Spec.System != v1alpha1.SystemPulsar {
		t.Components = []v1alpha1.ComponentEnvelope{strimzi.BrokerEnvelope(m).Status("broker", t.Brokers)}
		return t
	}
	t.Bookies = m.BookiesOrDefault()
	t.DelayEnsembleChange = durability.DelayEnsembleChange(m.BrokerConfig)
	envs := pulsar.EnvelopesOf(m)
	t.Components = []v1alpha1.ComponentEnvelope{
		envs.ZooKeeper.Status("metadataStore", m.MetadataStoreReplicasOrDefault()),
		withMemFlags(envs.Bookie.Status("bookie", t.Bookies), m.BookieConfig),
		withMemFlags(envs.Broker.Status("broker", t.Brokers), m.BrokerConfig),
	}
	return t
}

// withMemFlags records the JVM sizes a PULSAR_MEM of the component's
// config overlay sets, which win over the envelope's.
func withMemFlags(c v1alpha1.ComponentEnvelope, overlay map[string]string) v1alpha1.ComponentEnvelope {
	flags, ok := overlay["PULSAR_MEM"]
	if !ok {
		return c
	}
	c.Heap, c.DirectMemory = "", ""
	for _, f := range strings.Fields(flags) {
		switch {
		case strings.HasPrefix(f, "-Xmx"):
			c.Heap = strings.TrimPrefix(f, "-Xmx")
		case strings.HasPrefix(f, "-XX:MaxDirectMemorySize="):
			c.DirectMemory = strings.TrimPrefix(f, "-XX:MaxDirectMemorySize=")
		}
	}
	return c
}
