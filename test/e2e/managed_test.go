//go:build e2e && e2e_managed

package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/pulsar"
)

// Managed Pulsar needs the Apache Pulsar chart's images, which only a
// networked CI can pull (kind on GitHub Actions: `make
// test-e2e-kind-managed`, build tag e2e_managed). Managed Kafka runs
// everywhere: managed_kafka_test.go. One node, sized for a CI runner: one
// replica, acknowledged by it.

var _ = Describe("managed brokers", Label("managed"), Ordered, func() {
	for _, system := range []v1alpha1.System{v1alpha1.SystemPulsar} {
		It("deploys "+string(system)+", runs the workload to Succeeded and tears the brokers down", func(ctx SpecContext) {
			run := managedRun("e2e-managed-"+string(system), system)
			Expect(k8s.Create(ctx, run)).To(Succeed())
			got := waitForPhase(ctx, run, v1alpha1.PhaseSucceeded, 25*time.Minute)
			expectResults(ctx, got, system)
			By("teardown Always removes the brokers")
			var deployed []string
			for _, name := range pulsar.StatefulSetNames(pulsar.ReleaseName(got)) {
				deployed = append(deployed, "statefulset/"+name)
			}
			Eventually(func() string {
				return kubectl(nil, append([]string{"-n", testNS, "get", "--ignore-not-found", "-o", "name"}, deployed...)...)
			}).WithTimeout(5 * time.Minute).WithPolling(5 * time.Second).Should(BeEmpty())
		}, SpecTimeout(30*time.Minute))
	}
})
