package controllers

import (
	"fmt"
	"sync/atomic"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

var nsCounter atomic.Int32

// newNamespace creates a namespace of its own for one test.
func newNamespace() string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: fmt.Sprintf("test-%d", nsCounter.Add(1)),
	}}
	Expect(k8sClient.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

// validRun is a minimal run the API server accepts; tests break one thing
// at a time.
func validRun(ns string, system v1alpha1.System) *v1alpha1.BenchmarkRun {
	run := &v1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "run-", Namespace: ns},
		Spec: v1alpha1.BenchmarkRunSpec{
			System:   system,
			Cluster:  v1alpha1.ClusterSpec{Managed: &v1alpha1.ManagedCluster{}},
			Workload: v1alpha1.WorkloadSpec{MessageSize: 1024, ProducerRate: 1000},
		},
	}
	if system == v1alpha1.SystemPulsar {
		// envtest's API server has no default StorageClass, and a managed
		// Pulsar run whose ZooKeeper claims get none fails in Pending
		// (phase_pending_storage.go); the class need not exist.
		run.Spec.Cluster.Managed.Storage.MetadataStore.StorageClassName = ptr.To("standard")
	}
	return run
}

func level(l v1alpha1.Level) *v1alpha1.Level { return &l }

func float(f float64) *float64 { return &f }
