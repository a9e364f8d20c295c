package controllers

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/cost"
	"github.com/streambench/streambench-operator/internal/provision/workers"
	"github.com/streambench/streambench-operator/internal/results"
)

// teamPrices is a tenant's price model file, as docs/cost.md shows one.
const teamPrices = `name: team-prices
source: our cloud contract, table 3
date: 2026-11-30
currency: EUR
coreHour: 0.05
gibHour: 0.006
storageGBMonth: 0.08
retentionHours: 72
`

var _ = Describe("a run's cost", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })
	pricesConfigMap := func(name, data string) *corev1.ConfigMap {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"prices.yaml": data}}
		Expect(k8sClient.Create(ctx, cm)).To(Succeed())
		return cm
	}

	It("is priced by the ConfigMap spec.cost names, as read when the run started, into status.results.cost and summary.json", func() {
		cm := pricesConfigMap("prices", teamPrices)
		run := existingKafkaRun(ns)
		run.Spec.Cost = &v1alpha1.CostSpec{PriceModelRef: &v1alpha1.ConfigMapFileRef{Name: "prices"}}
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		running := waitPhase(run, v1alpha1.PhaseRunning)
		Expect(running.Status.PriceModel).NotTo(BeNil())
		Expect(running.Status.PriceModel.Name).To(Equal("team-prices"))
		// A ConfigMap changed mid-run does not reprice the run.
		cm.Data["prices.yaml"] = "name: changed\n"
		Expect(k8sClient.Update(ctx, cm)).To(Succeed())

		writeResults(running)
		finishJob(getJob(run, workers.CoordinatorName(run)), true)
		done := waitPhase(run, v1alpha1.PhaseSucceeded)
		Expect(done.Status.Results.Cost).NotTo(BeNil())
		Expect(done.Status.Results.Cost.Model).To(Equal("team-prices"))
		Expect(done.Status.Results.Cost.Currency).To(Equal("EUR"))
		// The writer above reports no broker resources: what needs them is
		// missing, and says why, rather than zero.
		Expect(done.Status.Results.Cost.MBPerSecPerCore).To(BeNil())
		Expect(done.Status.Results.Cost.Missing).To(ContainSubstring("no broker resources were measured"))

		var written corev1.ConfigMap
		Expect(k8sClient.Get(ctx, key(&v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: done.Status.ResultsRef}}), &written)).To(Succeed())
		Expect(written.Data[results.KeySummary]).To(ContainSubstring(`"cost":{"model":{"name":"team-prices"`))
	})

	It("is priced at the default list prices without spec.cost, and says so", func() {
		run := existingKafkaRun(ns)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		done := runToSucceeded(run)
		Expect(done.Status.PriceModel).To(BeNil())
		Expect(done.Status.Results.Cost.Model).To(Equal(cost.Default().Name))
	})

	DescribeTable("a bad price model fails the run at once, naming the field and the fix",
		func(data string, c func() *v1alpha1.CostSpec, want string) {
			if data != "" {
				pricesConfigMap("prices", data)
			}
			run := existingKafkaRun(ns)
			run.Spec.Cost = c()
			Expect(k8sClient.Create(ctx, run)).To(Succeed())
			failed := waitPhase(run, v1alpha1.PhaseFailed)
			Expect(failed.Status.Message).To(ContainSubstring(want))
			Expect(failed.Status.PriceModel).To(BeNil())
			noJobs(run)
		},
		Entry("a misspelt price", teamPrices+"coreHours: 1\n",
			func() *v1alpha1.CostSpec {
				return &v1alpha1.CostSpec{PriceModelRef: &v1alpha1.ConfigMapFileRef{Name: "prices"}}
			},
			`spec.cost.priceModelRef: the price model in ConfigMap prices, key prices.yaml: price model: error unmarshaling JSON: while decoding JSON: json: unknown field "coreHours"`),
		Entry("a ConfigMap that is not there", "",
			func() *v1alpha1.CostSpec {
				return &v1alpha1.CostSpec{PriceModelRef: &v1alpha1.ConfigMapFileRef{Name: "nope"}}
			},
			"spec.cost.priceModelRef.name: ConfigMap nope not found"),
		Entry("an inline model without its source", "",
			func() *v1alpha1.CostSpec {
				return &v1alpha1.CostSpec{PriceModel: &v1alpha1.PriceModel{Name: "x", Currency: "EUR", CoreHour: 1}}
			},
			"spec.cost.priceModel: price model: source and date: both are required"),
	)

	It("is refused by the API server when it names both a model and a ConfigMap", func() {
		run := existingKafkaRun(ns)
		run.Spec.Cost = &v1alpha1.CostSpec{PriceModel: &v1alpha1.PriceModel{Name: "x"}, PriceModelRef: &v1alpha1.ConfigMapFileRef{Name: "prices"}}
		err := k8sClient.Create(ctx, run)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("spec.cost: set priceModel or priceModelRef, not both"))
	})
})
