// Package envelope decides what a managed broker component's pods get, the
// same way for both systems, and says so: the pod's CPU and memory, and
// inside the memory the JVM's heap and direct memory; the rest is the page
// cache's, the JVM's own (metaspace, thread stacks) and the kernel's.
//
// Two twins compare fairly only inside the same envelope, and a memory
// request without a limit is no envelope: the page cache a container fills
// is charged to its memory cgroup, so a Kafka broker under a 48Gi limit has
// at most that for its heap and page cache together, while a bookie with a
// 32Gi request and no limit may take the whole node. So a component given a
// memory request only gets that request as its limit too, and its JVM is
// sized from the limit — explicitly on both sides (Strimzi's own sizing, 50
// % of the limit capped at 5 GiB, would otherwise be implicit and change
// with Strimzi's version).
package envelope

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// Component is a data-path part of a managed cluster.
type Component string

const (
	KafkaBroker  Component = "kafka-broker"
	PulsarBroker Component = "pulsar-broker"
	Bookie       Component = "bookie"
	ZooKeeper    Component = "zookeeper"
)

// share is how a component's JVM divides its container's memory.
type share struct {
	// heap and direct are percent of the memory limit; heapCap caps the
	// heap (0: none).
	heap, direct int64
	heapCap      int64
}

// shares follow each system's own guidance, inside the same envelope:
//   - Kafka keeps its log in the page cache and little on the heap: half
//     the limit, at most 5 GiB (Strimzi's default sizing, made explicit),
//     the rest for the page cache.
//   - Pulsar brokers keep the managed-ledger cache in direct memory; bookies
//     keep DbLedgerStorage's write and read-ahead caches there (a quarter
//     of direct memory each), so bookies get more direct memory than heap.
//   - ZooKeeper uses the heap only.
var shares = map[Component]share{
	KafkaBroker:  {heap: 50, heapCap: 5 << 30},
	PulsarBroker: {heap: 40, direct: 40},
	Bookie:       {heap: 30, direct: 50},
	ZooKeeper:    {heap: 60},
}

// minJVM is the smallest heap or direct memory given, so a tiny test pod
// still starts.
const minJVM = 64 << 20

// Envelope is what one component's pods get.
type Envelope struct {
	// Resources are the pod's, with the memory limit set to the request
	// when only a request was given.
	Resources corev1.ResourceRequirements
	// HeapBytes and DirectBytes are the JVM's sizes (0: not sized, when the
	// component has no memory limit or request).
	HeapBytes, DirectBytes int64
	// LimitFromRequest says the limit was the request's.
	LimitFromRequest bool
}

// Of is the envelope of component c given the resources r of the spec.
func Of(c Component, r corev1.ResourceRequirements) Envelope {
	e := Envelope{Resources: *r.DeepCopy()}
	mem, ok := r.Limits[corev1.ResourceMemory]
	if !ok {
		if req, has := r.Requests[corev1.ResourceMemory]; has && req.Sign() > 0 {
			if e.Resources.Limits == nil {
				e.Resources.Limits = corev1.ResourceList{}
			}
			e.Resources.Limits[corev1.ResourceMemory] = req.DeepCopy()
			mem, ok, e.LimitFromRequest = req, true, true
		}
	}
	if !ok || mem.Sign() <= 0 {
		return e
	}
	s := shares[c]
	e.HeapBytes = max(mem.Value()*s.heap/100, minJVM)
	if s.heapCap > 0 {
		e.HeapBytes = min(e.HeapBytes, s.heapCap)
	}
	if s.direct > 0 {
		e.DirectBytes = max(mem.Value()*s.direct/100, minJVM)
	}
	return e
}

// MiB is n bytes in whole MiB, the unit of the JVM flags.
func MiB(n int64) int64 { return n / (1 << 20) }

// HeapFlags are equal -Xms and -Xmx (no heap growth pauses during a
// measurement) and, with direct memory, -XX:MaxDirectMemorySize.
func (e Envelope) HeapFlags() string {
	s := fmt.Sprintf("-Xms%dm -Xmx%dm", MiB(e.HeapBytes), MiB(e.HeapBytes))
	if e.DirectBytes > 0 {
		s += fmt.Sprintf(" -XX:MaxDirectMemorySize=%dm", MiB(e.DirectBytes))
	}
	return s
}

// Status is the envelope as the run's status records it.
func (e Envelope) Status(name string, replicas int32) v1alpha1.ComponentEnvelope {
	q := func(l corev1.ResourceList, n corev1.ResourceName) string {
		if v, ok := l[n]; ok {
			return v.String()
		}
		return ""
	}
	out := v1alpha1.ComponentEnvelope{
		Component:     name,
		Replicas:      replicas,
		CPURequest:    q(e.Resources.Requests, corev1.ResourceCPU),
		CPULimit:      q(e.Resources.Limits, corev1.ResourceCPU),
		MemoryRequest: q(e.Resources.Requests, corev1.ResourceMemory),
		MemoryLimit:   q(e.Resources.Limits, corev1.ResourceMemory),
	}
	if e.HeapBytes > 0 {
		out.Heap = fmt.Sprintf("%dMi", MiB(e.HeapBytes))
	}
	if e.DirectBytes > 0 {
		out.DirectMemory = fmt.Sprintf("%dMi", MiB(e.DirectBytes))
	}
	return out
}
