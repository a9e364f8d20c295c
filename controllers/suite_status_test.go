package controllers

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// The suite controller writes its status the way the run controller does
// (writeStatus): a merge patch with the resourceVersion of the copy the
// step was computed from. The suite here is one that failed at planning
// (its workload ConfigMap is missing), so the running manager leaves it
// alone while the spec calls updateSuiteStatus directly.
var _ = Describe("a suite's status write", func() {
	failedSuite := func() *v1alpha1.BenchmarkSuite {
		s := existingSuite(newNamespace(), "st", []v1alpha1.Level{2}, nil)
		s.Spec.Workloads[0] = v1alpha1.SuiteWorkload{Name: "file", ConfigMapRef: &v1alpha1.ConfigMapFileRef{Name: "nope"}}
		Expect(k8sClient.Create(ctx, s)).To(Succeed())
		return waitSuitePhase(s, v1alpha1.PhaseFailed)
	}
	r := func() *BenchmarkSuiteReconciler { return &BenchmarkSuiteReconciler{Client: k8sClient} }
	// client-go's FakeRecorder stands in for the event sink only: what is
	// checked is whether the controller announced a write at all.
	recording := func() (*BenchmarkSuiteReconciler, *events.FakeRecorder) {
		rec := events.NewFakeRecorder(10)
		return &BenchmarkSuiteReconciler{Client: k8sClient, Recorder: rec}, rec
	}

	It("computed from a stale copy is a conflict and leaves the newer status as it was", func() {
		stale := failedSuite()
		newer := stale.DeepCopy()
		newer.Status.Message = "written by someone else since"
		Expect(k8sClient.Status().Update(ctx, newer)).To(Succeed())

		stale.Status.Message = "computed from the old copy"
		err := r().updateSuiteStatus(ctx, stale, "Normal", "Test")
		Expect(apierrors.IsConflict(err)).To(BeTrue(), "got %v", err)
		Expect(err.Error()).To(ContainSubstring("computed from resourceVersion " + stale.ResourceVersion))
		Expect(getSuite(stale).Status.Message).To(Equal("written by someone else since"))
	})

	It("sends nothing and announces nothing when nothing changed, and writes a change with the new resourceVersion", func() {
		s := failedSuite()
		before := s.ResourceVersion
		rc, rec := recording()
		Expect(rc.updateSuiteStatus(ctx, s, "Normal", "Test")).To(Succeed())
		Expect(getSuite(s).ResourceVersion).To(Equal(before))
		Expect(rec.Events).To(BeEmpty(), "an unchanged status earned an event")

		s.Status.Message = "changed"
		Expect(rc.updateSuiteStatus(ctx, s, "Normal", "Test")).To(Succeed())
		Expect(rec.Events).To(Receive(ContainSubstring("Normal Test changed")))
		got := getSuite(s)
		Expect(got.Status.Message).To(Equal("changed"))
		Expect(got.ResourceVersion).NotTo(Equal(before))
		Expect(s.ResourceVersion).To(Equal(got.ResourceVersion), "the caller's copy carries what was written")
	})
})
