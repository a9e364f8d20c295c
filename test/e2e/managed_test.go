//go:build e2e && e2e_managed

package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/pulsar"
)

// Managed Pulsar on upstream's own image (apachepulsar/pulsar-all, the
// chart's default version), which only a networked CI can pull (kind on
// GitHub Actions: `make test-e2e-kind-managed`, build tag e2e_managed). The
// local cluster runs the same chart on the image hack/images/pulsar.sh
// assembles: managed_pulsar_test.go; managed Kafka: managed_kafka_test.go.
// One node, sized for a CI runner: one replica, acknowledged by it.

func managedRun(prefix string, system v1alpha1.System) *v1alpha1.BenchmarkRun {
	size := ptr.To(resource.MustParse("2Gi"))
	managed := &v1alpha1.ManagedCluster{
		Brokers: 1,
		Storage: v1alpha1.StorageSpec{
			Data:    v1alpha1.VolumeSpec{Size: size},
			Journal: v1alpha1.VolumeSpec{Size: size},
			Ledgers: v1alpha1.VolumeSpec{Size: size},
		},
	}
	if system == v1alpha1.SystemPulsar {
		managed.Bookies, managed.MetadataStoreReplicas = 1, 1
	}
	return &v1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-", Namespace: testNS},
		Spec: v1alpha1.BenchmarkRunSpec{
			System:  system,
			Cluster: v1alpha1.ClusterSpec{Managed: managed},
			Durability: &v1alpha1.DurabilitySpec{
				Replication: &v1alpha1.ReplicationDurability{Replicas: 1, AckReplicas: 1, Mode: v1alpha1.ReplicationSync},
				Local:       &v1alpha1.LocalDurability{Mode: v1alpha1.LocalAsync},
			},
			Workload: smallWorkload(prefix, 0.5),
			Workers:  e2eWorkers(),
			Timeouts: v1alpha1.TimeoutsSpec{Provisioning: &metav1.Duration{Duration: 15 * time.Minute}},
		},
	}
}

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
