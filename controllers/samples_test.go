package controllers

import (
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

var _ = Describe("config/samples", func() {
	files, err := filepath.Glob(filepath.Join("..", "config", "samples", "*.yaml"))
	if err != nil || len(files) == 0 {
		Fail("no samples found in config/samples")
	}
	for _, file := range files {
		if filepath.Base(file) == "kustomization.yaml" {
			continue
		}
		It("creates "+filepath.Base(file)+" and the controller resolves its durability", func() {
			data, err := os.ReadFile(file)
			Expect(err).NotTo(HaveOccurred())
			var run v1alpha1.BenchmarkRun
			Expect(yaml.UnmarshalStrict(data, &run)).To(Succeed(), "the sample must use only fields of the API")
			run.Namespace = newNamespace()
			Expect(k8sClient.Create(ctx, &run)).To(Succeed())

			var got v1alpha1.BenchmarkRun
			key := types.NamespacedName{Namespace: run.Namespace, Name: run.Name}
			Eventually(func(g Gomega) {
				g.Expect(k8sClient.Get(ctx, key, &got)).To(Succeed())
				g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, v1alpha1.ConditionDurabilityResolved)).To(BeTrue())
			}).Should(Succeed())
			Expect(got.Status.Durability).NotTo(BeNil())
			Expect(got.Status.Durability.AchievedLevel).To(BeNumerically(">=", 1))
			// The API server filled the defaults the sample left out.
			Expect(got.Spec.Workload.KeyDistributor).To(Equal(v1alpha1.KeyNone))
			Expect(got.Spec.Teardown.Policy).NotTo(BeEmpty())
			Expect(got.Spec.Timeouts.Provisioning).NotTo(BeNil())
		})
	}
})

// The twins of the durability matrix run on the same ground: the same node
// pool and tolerations, the same StorageClass, and as many data disks per
// Kafka broker as a bookie has (journal + ledgers).
var _ = Describe("config/samples twins", func() {
	read := func(name string) *v1alpha1.BenchmarkRun {
		data, err := os.ReadFile(filepath.Join("..", "config", "samples", name))
		Expect(err).NotTo(HaveOccurred())
		var run v1alpha1.BenchmarkRun
		Expect(yaml.UnmarshalStrict(data, &run)).To(Succeed())
		return &run
	}
	for _, kafka := range []string{"run-ack2-async", "run-ack2-sync", "run-ack1-async", "run-ack1-sync"} {
		It("places "+kafka+" and its Pulsar twins on the same node pool, StorageClass and number of disks", func() {
			k := read(kafka + ".yaml").Spec.Cluster.Managed
			twins := []string{kafka + "-pulsar.yaml"}
			if kafka == "run-ack2-async" {
				twins = append(twins, "run-ack2-bypass-pulsar.yaml")
			}
			for _, twin := range twins {
				p := read(twin).Spec.Cluster.Managed
				Expect(p.Placement.NodeSelector).To(Equal(k.Placement.NodeSelector), twin)
				Expect(p.Placement.Tolerations).To(Equal(k.Placement.Tolerations), twin)
				kafkaClasses := []string{*k.Storage.Data.StorageClassName}
				for _, v := range k.Storage.AdditionalData {
					kafkaClasses = append(kafkaClasses, *v.StorageClassName)
				}
				Expect(kafkaClasses).To(Equal([]string{*p.Storage.Journal.StorageClassName, *p.Storage.Ledgers.StorageClassName}), twin)
			}
		})
	}

	It("has the journal-bypass Pulsar sample, the study's key configuration", func() {
		d := read("run-ack2-bypass-pulsar.yaml").Spec.Durability
		Expect(d.Local.Journal).To(Equal(v1alpha1.JournalBypass))
		Expect(d.Replication.AckReplicas).To(Equal(int32(2)))
	})
})
