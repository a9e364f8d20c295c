package controllers

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

var _ = Describe("a new BenchmarkRun", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	// pending creates the run and waits until its durability is resolved
	// (the run then moves on; what follows is for the lifecycle tests).
	pending := func(run *v1alpha1.BenchmarkRun) *v1alpha1.BenchmarkRun {
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		var got v1alpha1.BenchmarkRun
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: run.Name}, &got)).To(Succeed())
			g.Expect(meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionDurabilityResolved)).NotTo(BeNil())
		}).Should(Succeed())
		return &got
	}

	It("gets durability level 2 by default, translated for Kafka", func() {
		got := pending(existingKafkaRun(ns))
		Expect(*got.Spec.Durability.Level).To(Equal(v1alpha1.Level2))
		d := got.Status.Durability
		Expect(d.RequestedLevel).To(Equal(v1alpha1.Level2))
		Expect(d.AchievedLevel).To(Equal(v1alpha1.Level2))
		Expect(d.Kafka).NotTo(BeNil())
		Expect(d.Kafka.ReplicationFactor).To(Equal(int32(3)))
		Expect(d.Kafka.Producer).To(HaveKeyWithValue("acks", "all"))
		Expect(d.Kafka.Topic).To(HaveKeyWithValue("min.insync.replicas", "2"))
		Expect(d.Pulsar).To(BeNil())
		Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
		cond := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionDurabilityResolved)
		Expect(cond).NotTo(BeNil())
		Expect(cond.Status).To(Equal(metav1.ConditionTrue))
		Expect(cond.Reason).To(Equal(v1alpha1.ReasonTranslated))
	})

	It("gives managed Kafka level 1 as asked, verified by the experiment for Strimzi's Kafka 4.3.1", func() {
		run := validRun(ns, v1alpha1.SystemKafka)
		run.Spec.Durability = &v1alpha1.DurabilitySpec{Level: level(1)}
		got := pending(run)
		d := got.Status.Durability
		Expect(d.RequestedLevel).To(Equal(v1alpha1.Level1))
		Expect(d.AchievedLevel).To(Equal(v1alpha1.Level1))
		Expect(d.Local).To(Equal(v1alpha1.LocalSync))
		Expect(d.BrokerVersion).To(Equal("4.3.1"))
		Expect(d.Verification).To(Equal(v1alpha1.Verified))
		Expect(d.Explanation).To(ContainSubstring("verified by the sync-delay experiment on Kafka 4.3.1"))
		Expect(d.Explanation).To(ContainSubstring("a sync per append on every replica"))
		Expect(d.Kafka.Topic).To(HaveKeyWithValue("flush.messages", "1"))
		Expect(d.Kafka.Topic).To(HaveKeyWithValue("flush.ms", "0"))
		cond := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionDurabilityResolved)
		Expect(cond.Reason).To(Equal(v1alpha1.ReasonTranslated))
		Expect(cond.Message).To(Equal("durability level 1 in effect, verified for Kafka 4.3.1 (where syncs fall; the replicas an ack waits for, at 3)"))

		Eventually(func(g Gomega) {
			var events eventsv1.EventList
			g.Expect(k8sClient.List(ctx, &events, client.InNamespace(ns))).To(Succeed())
			var reasons []string
			for _, e := range events.Items {
				if e.Regarding.Name == run.Name {
					reasons = append(reasons, e.Type+"/"+e.Reason)
				}
			}
			g.Expect(reasons).To(ContainElement("Normal/" + v1alpha1.ReasonTranslated))
			g.Expect(reasons).NotTo(ContainElement("Warning/" + v1alpha1.ReasonLevelDowngraded))
		}).Should(Succeed())
	})

	It("marks Kafka level 3 on a version the experiment does not cover as configured, not verified", func() {
		run := validRun(ns, v1alpha1.SystemKafka)
		run.Spec.Cluster.Managed.Version = "3.9.0"
		run.Spec.Durability = &v1alpha1.DurabilitySpec{Level: level(3)}
		got := pending(run)
		d := got.Status.Durability
		Expect(d.AchievedLevel).To(Equal(v1alpha1.Level3))
		Expect(d.BrokerVersion).To(Equal("3.9.0"))
		Expect(d.Verification).To(Equal(v1alpha1.NotVerified))
		Expect(d.Explanation).To(ContainSubstring("not verified"))
		Expect(d.Explanation).To(ContainSubstring("does not cover Kafka 3.9.0"))
		cond := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionDurabilityResolved)
		Expect(cond.Message).To(Equal("durability level 3 in effect, as configured, not verified"))
	})

	It("gives Pulsar level 1 as asked: ack quorum 2 and a synced journal", func() {
		run := validRun(ns, v1alpha1.SystemPulsar)
		run.Spec.Durability = &v1alpha1.DurabilitySpec{Level: level(1)}
		got := pending(run)
		d := got.Status.Durability
		Expect(d.AchievedLevel).To(Equal(v1alpha1.Level1))
		Expect(d.Pulsar).NotTo(BeNil())
		Expect([]int32{d.Pulsar.EnsembleSize, d.Pulsar.WriteQuorum, d.Pulsar.AckQuorum}).To(Equal([]int32{3, 3, 2}))
		Expect(d.Pulsar.Bookie).To(HaveKeyWithValue("journalSyncData", "true"))
	})
})
