//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// The tenancy model (docs/security.md) on a real cluster, with the
// operator installed from the chart: a user who holds the built-in edit
// role in one namespace, and nothing else, creates runs there. The
// legitimate runs of the suite (the managed samples with their faults, the
// secured existing cluster) are made as that user too (applyRun,
// asTenant); this spec tries issue 58's exploits as that user and checks
// that nothing outside the tenant's namespace changed.

// tenantUser is the tenant every process binds to edit in its own test
// namespace; the suite impersonates it (rest.ImpersonationConfig, kubectl
// --as).
const tenantUser = "e2e-tenant"

var tenantClient client.Client

// bindTenant grants tenantUser the built-in edit role in ns, and waits
// until the chart's streambench-edit, aggregated into edit, lets it create
// runs there.
func bindTenant(ctx context.Context, ns string) {
	Expect(k8s.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "e2e-tenant-edit"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: tenantUser}},
	})).To(Succeed())
	Eventually(func() bool {
		return tenantMay(ctx, "create", "streambench.io", "benchmarkruns", "", ns)
	}).WithTimeout(time.Minute).WithPolling(time.Second).Should(BeTrue(),
		"edit in %s lets %s create BenchmarkRuns (the chart's streambench-edit aggregates into edit)", ns, tenantUser)
}

// asTenant is a client that acts as tenantUser.
func asTenant() client.Client {
	if tenantClient != nil {
		return tenantClient
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	cfg.Impersonate = rest.ImpersonationConfig{UserName: tenantUser}
	tenantClient, err = client.New(cfg, client.Options{Scheme: k8s.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	return tenantClient
}

// tenantMay asks the API server whether tenantUser may do verb on
// group/resource[/subresource] in ns.
func tenantMay(ctx context.Context, verb, group, resource, subresource, ns string) bool {
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: tenantUser, Groups: []string{"system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: group, Resource: resource, Subresource: subresource},
	}}
	Expect(k8s.Create(ctx, sar)).To(Succeed())
	return sar.Status.Allowed
}

// operatorJobsOf are the Jobs in the operator's namespace that name run
// in a label: the privileged Jobs the operator made for it.
func operatorJobsOf(ctx context.Context, run *v1alpha1.BenchmarkRun) []string {
	var jobs batchv1.JobList
	Expect(k8s.List(ctx, &jobs, client.InNamespace(operatorNamespace))).To(Succeed())
	var out []string
	for _, j := range jobs.Items {
		for _, v := range j.Labels {
			if v == run.Name || v == string(run.UID) {
				out = append(out, j.Name)
			}
		}
	}
	return out
}

var _ = Describe("a tenant with edit in one namespace", Label("tenancy"), Ordered, func() {
	var (
		victim    string
		victimPod *corev1.Pod
	)

	BeforeAll(func(ctx SpecContext) {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-victim-"}}
		Expect(k8s.Create(ctx, ns)).To(Succeed())
		victim = ns.Name
		DeferCleanup(func(ctx SpecContext) { _ = k8s.Delete(ctx, ns) })
		// A broker look-alike of another team: Pending (no node has the
		// label it asks for), which is all a deletion needs.
		victimPod = &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: victim, Name: "victim-broker-0", Labels: map[string]string{"app": "victim"}},
			Spec: corev1.PodSpec{
				NodeSelector: map[string]string{"streambench.io/e2e-no-such-node": "true"},
				Containers:   []corev1.Container{{Name: "kafka", Image: image}},
			},
		}
		Expect(k8s.Create(ctx, victimPod)).To(Succeed())
	})

	victimUnchanged := func(ctx context.Context) {
		var now corev1.Pod
		ExpectWithOffset(1, k8s.Get(ctx, types.NamespacedName{Namespace: victim, Name: victimPod.Name}, &now)).To(Succeed(), "the victim's pod is still there")
		ExpectWithOffset(1, now.UID).To(Equal(victimPod.UID), "the victim's pod is the same one")
		ExpectWithOffset(1, now.DeletionTimestamp).To(BeNil())
	}

	It("may run benchmarks in its namespace, and may not touch the victim's pods or the operator's namespace", func(ctx SpecContext) {
		for _, c := range []struct {
			verb, group, resource, sub, ns string
			want                           bool
		}{
			{"create", "streambench.io", "benchmarkruns", "", testNS, true},
			{"create", "streambench.io", "benchmarksuites", "", testNS, true},
			{"update", "streambench.io", "benchmarkruns", "status", testNS, false},
			{"delete", "", "pods", "", victim, false},
			{"create", "streambench.io", "benchmarkruns", "", victim, false},
			{"update", "", "namespaces", "", "", false}, // so it cannot give itself consent
			{"get", "", "secrets", "", operatorNamespace, false},
			{"create", "batch", "jobs", "", operatorNamespace, false},
			{"create", "", "pods", "exec", operatorNamespace, false},
		} {
			Expect(tenantMay(ctx, c.verb, c.group, c.resource, c.sub, c.ns)).To(Equal(c.want),
				"may %s %s %s/%s in %q", tenantUser, c.verb, c.resource, c.sub, c.ns)
		}
	})

	It("cannot have the operator delete another namespace's pod (issue 58's attack), and is told whose consent is missing", func(ctx SpecContext) {
		run := newRun("e2e-tenant-attack", v1alpha1.SystemKafka, v1alpha1.ExistingCluster{
			// Any address: the run is refused before it is reached.
			BootstrapServers: brokerHost + ":9092",
			Faults: &v1alpha1.ExistingClusterFaults{AllowDisruption: true, Namespace: victim,
				PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "victim"}}},
		}, 0.5)
		run.Spec.Faults = []v1alpha1.Fault{{Action: v1alpha1.FaultDeletePod, Target: "broker-0", At: metav1.Duration{Duration: 10 * time.Second}}}
		Expect(asTenant().Create(ctx, run)).To(Succeed())
		got := waitForPhase(ctx, run, v1alpha1.PhaseFailed, 2*time.Minute)
		Expect(got.Status.Message).To(ContainSubstring(fmt.Sprintf("namespace %s has not agreed that runs of namespace %s", victim, testNS)))
		Expect(got.Status.Message).To(ContainSubstring("streambench.io/allow-faults-from=" + testNS))
		Expect(got.Status.Faults).To(BeEmpty())
		Consistently(func() []string { return operatorJobsOf(ctx, got) }, 5*time.Second).Should(BeEmpty(), "no Job in the operator's namespace")
		victimUnchanged(ctx)
	}, SpecTimeout(3*time.Minute))

	It("cannot have the operator read a Strimzi cluster of another namespace", func(ctx SpecContext) {
		run := newRun("e2e-tenant-strimzi", v1alpha1.SystemKafka, v1alpha1.ExistingCluster{
			StrimziCluster: &v1alpha1.StrimziClusterRef{Name: "victim", Namespace: victim},
		}, 0.5)
		Expect(asTenant().Create(ctx, run)).To(Succeed())
		got := waitForPhase(ctx, run, v1alpha1.PhaseFailed, 2*time.Minute)
		Expect(got.Status.Message).To(ContainSubstring("spec.cluster.existing.strimziCluster.namespace: namespace " + victim))
		Expect(strings.Contains(got.Status.Message, "allow-runs-from")).To(BeTrue(), got.Status.Message)
	}, SpecTimeout(3*time.Minute))

	It("learns no other key of a Secret through a refusal, and runs no image the operator's admin did not allow", func(ctx SpecContext) {
		By("a run naming a key the Secret lacks: the refusal names the key asked, never the Secret's others")
		kubectl(nil, "-n", testNS, "create", "secret", "generic", "e2e-tenant-keys",
			"--from-literal=admin-password=e2e-hidden-1", "--from-literal=replication-token=e2e-hidden-2")
		run := newRun("e2e-tenant-keys", v1alpha1.SystemKafka, v1alpha1.ExistingCluster{
			BootstrapServers: brokerHost + ":9092",
			Authentication: &v1alpha1.ClientAuthentication{Mechanism: v1alpha1.AuthScramSHA512, Username: "bench",
				Password: &v1alpha1.SecretKeyRef{Name: "e2e-tenant-keys", Key: "password"}},
			TLS: &v1alpha1.ClientTLS{InsecureSkipVerify: true},
		}, 0.5)
		Expect(asTenant().Create(ctx, run)).To(Succeed())
		got := waitForPhase(ctx, run, v1alpha1.PhaseFailed, 2*time.Minute)
		Expect(got.Status.Message).To(ContainSubstring("Secret e2e-tenant-keys has no key password"))
		for _, other := range []string{"admin-password", "replication-token", "e2e-hidden"} {
			Expect(got.Status.Message).NotTo(ContainSubstring(other), "the refusal names another key of the Secret")
		}

		By("a run naming its own worker image: refused before anything runs")
		img := newRun("e2e-tenant-image", v1alpha1.SystemKafka, v1alpha1.ExistingCluster{BootstrapServers: brokerHost + ":9092"}, 0.5)
		img.Spec.Workers.Image = "registry.example/attacker/streambench:latest"
		Expect(asTenant().Create(ctx, img)).To(Succeed())
		refused := waitForPhase(ctx, img, v1alpha1.PhaseFailed, 2*time.Minute)
		Expect(refused.Status.Message).To(ContainSubstring("spec.workers.image"))
		Expect(refused.Status.Message).To(ContainSubstring("registry.example/attacker/streambench:latest"))
		var jobs batchv1.JobList
		Expect(k8s.List(ctx, &jobs, client.InNamespace(testNS))).To(Succeed())
		for _, j := range jobs.Items {
			for _, c := range j.Spec.Template.Spec.Containers {
				Expect(c.Image).NotTo(ContainSubstring("attacker"), "Job %s", j.Name)
			}
		}
	}, SpecTimeout(5*time.Minute))
})
