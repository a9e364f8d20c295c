package controllers

import (
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/monitoring"
	"github.com/streambench/streambench-operator/internal/provision/workers"
)

// testMonitoringRelease is the suite's --monitoring-release.
const testMonitoringRelease = "kps-test"

// podMonitorCRD is the real Prometheus Operator PodMonitor CRD (v0.93.0).
func podMonitorCRD() *apiextensionsv1.CustomResourceDefinition {
	data, err := os.ReadFile(filepath.Join("..", "config", "test", "prometheus-operator", "monitoring.coreos.com_podmonitors.yaml"))
	Expect(err).NotTo(HaveOccurred())
	crd := &apiextensionsv1.CustomResourceDefinition{}
	Expect(yaml.Unmarshal(data, crd)).To(Succeed())
	return crd
}

func podMonitor(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(monitoring.PodMonitorGVK)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func eventReasons(ns, name string) func(Gomega) []string {
	return func(g Gomega) []string {
		var events eventsv1.EventList
		g.Expect(k8sClient.List(ctx, &events, client.InNamespace(ns))).To(Succeed())
		var reasons []string
		for _, e := range events.Items {
			if e.Regarding.Name == name {
				reasons = append(reasons, e.Type+"/"+e.Reason+": "+e.Note)
			}
		}
		return reasons
	}
}

// The CRD stays installed after these specs: the client's RESTMapper
// would go on seeing it (it does not look again on a hit). Specs that run
// later (a managed Pulsar release) then get the chart's PodMonitors too.
// Strimzi's CRDs are not installed here: another container's first spec
// needs a server without them.
var _ = Describe("monitoring with the Prometheus Operator", Ordered, func() {

	It("runs without the CRDs and says in an event that the run is not monitored", func() {
		ns := newNamespace()
		run := existingKafkaRun(ns)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		running := waitPhase(run, v1alpha1.PhaseRunning)
		Expect(running.Status.Monitoring).NotTo(BeNil())
		Expect(running.Status.Monitoring.Monitored).To(BeFalse())
		Expect(running.Status.Monitoring.Message).To(ContainSubstring("not monitored"))
		Eventually(eventReasons(ns, run.Name)).Should(ContainElement(ContainSubstring("Warning/NotMonitored: not monitored: the API server does not serve monitoring.coreos.com/v1")))
		args := getJob(run, workers.CoordinatorName(run)).Spec.Template.Spec.Containers[0].Args
		Expect(args).To(ContainElement("--metrics-address=:8080"))
		Expect(args).NotTo(ContainElement(HavePrefix("--prometheus-url")), "no Prometheus to ask")
		runToSucceeded(run)
	})

	It("creates the workers' and coordinator's PodMonitor, finds kube-prometheus-stack's Prometheus, and tears it down", func() {
		_, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{podMonitorCRD()}})
		Expect(err).NotTo(HaveOccurred())

		// kube-prometheus-stack's Prometheus Service, as its chart labels it.
		promNS := newNamespace()
		Expect(k8sClient.Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: promNS, Name: "kps-test-kube-prometheus-prometheus",
				Labels: map[string]string{"app": "kube-prometheus-stack-prometheus", "release": testMonitoringRelease}},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http-web", Port: 9090}}},
		})).To(Succeed())

		ns := newNamespace()
		run := existingKafkaRun(ns)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		running := waitPhase(run, v1alpha1.PhaseRunning)

		st := running.Status.Monitoring
		Expect(st).NotTo(BeNil())
		Expect(st.Monitored).To(BeTrue())
		// An existing cluster's brokers are monitored by whoever runs it.
		Expect(st.PodMonitors).To(ConsistOf(monitoring.WorkersName(run)))
		Expect(st.PrometheusURL).To(Equal("http://kps-test-kube-prometheus-prometheus." + promNS + ".svc:9090"))
		for _, name := range st.PodMonitors {
			pm := podMonitor(ns, name)
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pm), pm)).To(Succeed())
			Expect(pm.GetLabels()).To(HaveKeyWithValue("release", testMonitoringRelease))
			Expect(pm.GetOwnerReferences()).To(HaveLen(1))
			Expect(pm.GetOwnerReferences()[0].UID).To(Equal(running.UID))
		}
		args := getJob(run, workers.CoordinatorName(run)).Spec.Template.Spec.Containers[0].Args
		Expect(args).To(ContainElements("--prometheus-url="+st.PrometheusURL, "--broker-namespace="+ns))
		Expect(args).NotTo(ContainElement(HavePrefix("--broker-pods")), "an existing cluster's pods are not known")
		Expect(eventReasons(ns, run.Name)(Default)).NotTo(ContainElement(ContainSubstring("NotMonitored")))

		runToSucceeded(run)
		for _, name := range st.PodMonitors {
			Eventually(gone(podMonitor(ns, name))).Should(BeTrue(), "PodMonitor %s torn down with the run", name)
		}
		// A managed Kafka run's PodMonitor for Strimzi's pods passes the
		// real CRD's schema (the API server validates it).
		managed := validRun(ns, v1alpha1.SystemKafka)
		managed.Name, managed.UID = "managed-kafka", "0000-managed"
		for _, pm := range monitoring.PodMonitors(managed, monitoring.Config{Release: testMonitoringRelease}) {
			pm.SetOwnerReferences(nil)
			Expect(k8sClient.Create(ctx, pm)).To(Succeed(), "PodMonitor %s", pm.GetName())
			port, _, _ := unstructured.NestedSlice(pm.Object, "spec", "podMetricsEndpoints")
			Expect(port).To(HaveLen(1))
			Expect(k8sClient.Delete(ctx, pm)).To(Succeed())
		}
		// The Service is not the run's: it stays.
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: promNS, Name: "kps-test-kube-prometheus-prometheus"}, &corev1.Service{})).To(Succeed())
	})
})
