package controllers

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	helmtime "helm.sh/helm/v3/pkg/time"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/pulsar"
)

// Issue #58: Helm keeps a release's records (manifest, hooks) as Secrets
// in the namespace it installs into, which for a managed Pulsar run is the
// tenant's. A tenant who may write Secrets there could forge the record of
// the run's release, and the operator's uninstall would run its hooks and
// delete what its manifest lists, with the operator's rights. These specs
// act as such a tenant.

// labelReleaseNamespace is pulsar.LabelReleaseNamespace, spelt out: the
// specs say what a record in the operator's namespace must carry.
const labelReleaseNamespace = "streambench.io/release-namespace"

// helmRecords lists the Secrets Helm would read as the records of release
// in namespace ns (its own query: owner=helm,name=<release>), narrowed by
// extra labels.
func helmRecords(ns, rel string, extra map[string]string) []corev1.Secret {
	sel := client.MatchingLabels{"owner": "helm", "name": rel}
	for k, v := range extra {
		sel[k] = v
	}
	var list corev1.SecretList
	Expect(k8sClient.List(ctx, &list, client.InNamespace(ns), sel)).To(Succeed())
	return list.Items
}

// tenantClient is a user who may manage Secrets in ns and nowhere else, as
// the owner of a namespace commonly may.
func tenantClient(ns string) client.Client {
	name := "tenant-" + ns
	Expect(k8sClient.Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}},
	})).To(Succeed())
	Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "tenant"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}},
	})).To(Succeed())
	user, err := testEnv.AddUser(envtest.User{Name: name}, cfg)
	Expect(err).NotTo(HaveOccurred())
	c, err := client.New(user.Config(), client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	return c
}

// forgedRecord is a Helm release record as Helm's Secrets driver writes
// one (the release as gzipped JSON, base64; the labels Helm queries by),
// of revision 1 of release rel in ns, claiming the run's UID: its manifest
// is manifest and its only hook, pre-delete, hook.
func forgedRecord(ns, rel string, uid types.UID, manifest, hook string) *corev1.Secret {
	now := helmtime.Now()
	r := &release.Release{
		Name:      rel,
		Namespace: ns,
		Version:   1,
		Info:      &release.Info{Status: release.StatusDeployed, FirstDeployed: now, LastDeployed: now, Description: "Install complete"},
		Chart:     &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "pulsar", Version: testChartVersion}},
		Manifest:  manifest,
		Hooks: []*release.Hook{{
			Name: "planted", Kind: "ConfigMap", Path: "pulsar/templates/planted.yaml",
			Manifest: hook, Events: []release.HookEvent{release.HookPreDelete},
		}},
	}
	b, err := json.Marshal(r)
	Expect(err).NotTo(HaveOccurred())
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	_, err = w.Write(b)
	Expect(err).NotTo(HaveOccurred())
	Expect(w.Close()).To(Succeed())
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns,
			Name:      fmt.Sprintf("sh.helm.release.v1.%s.v%d", rel, r.Version),
			Labels: map[string]string{
				"owner": "helm", "name": rel, "status": "deployed", "version": strconv.Itoa(r.Version),
				pulsar.LabelOwner: string(uid),
			},
		},
		Type: "helm.sh/release.v1",
		Data: map[string][]byte{"release": []byte(base64.StdEncoding.EncodeToString(gz.Bytes()))},
	}
}

// writeAs creates secret as c, or, when a Secret of that name exists (the
// real record, where Helm kept it in the run's namespace), replaces it.
func writeAs(c client.Client, secret *corev1.Secret) {
	err := c.Create(ctx, secret)
	if apierrors.IsAlreadyExists(err) {
		var cur corev1.Secret
		Expect(c.Get(ctx, client.ObjectKeyFromObject(secret), &cur)).To(Succeed())
		secret.ResourceVersion = cur.ResourceVersion
		err = c.Update(ctx, secret)
	}
	Expect(err).NotTo(HaveOccurred())
}

var _ = Describe("a managed Pulsar run's Helm release records", func() {
	It("are kept in the operator's namespace, labelled with the run's namespace and UID, none in the run's, and go with the teardown", func() {
		ns := newNamespace()
		run := validRun(ns, v1alpha1.SystemPulsar)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		waitPhase(run, v1alpha1.PhaseProvisioning)
		rel := pulsar.ReleaseName(run)

		Eventually(func(g Gomega) {
			records := helmRecords(operatorNamespace, rel, map[string]string{labelReleaseNamespace: ns})
			g.Expect(records).To(HaveLen(1))
			g.Expect(records[0].Name).To(Equal("sh.helm.release.v1." + ns + "." + rel + ".v1"))
			g.Expect(records[0].Labels).To(HaveKeyWithValue(pulsar.LabelOwner, string(run.UID)))
			g.Expect(records[0].Labels).To(HaveKeyWithValue("status", "deployed"))
		}).Should(Succeed(), "the release record in the operator's namespace %s", operatorNamespace)
		Expect(helmRecords(ns, rel, nil)).To(BeEmpty(), "a release record in the run's namespace, where its tenant can write")

		pulsarReady(ns, rel, pulsar.StatefulSetNames(rel), pulsar.InitJobNames(rel))
		runToSucceeded(run)
		Eventually(func() []corev1.Secret {
			return helmRecords(operatorNamespace, rel, map[string]string{labelReleaseNamespace: ns})
		}).Should(BeEmpty())
		Expect(helmRecords(ns, rel, nil)).To(BeEmpty())
	})

	It("ignores a record a tenant forges in the run's namespace: the teardown runs none of its hooks and deletes none of its objects", func() {
		ns, victimNS := newNamespace(), newNamespace()
		victim := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: victimNS, Name: "victim"}, Data: map[string]string{"keep": "me"}}
		Expect(k8sClient.Create(ctx, victim)).To(Succeed())

		run := validRun(ns, v1alpha1.SystemPulsar)
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		rel := pulsar.ReleaseName(run)
		waitPhase(run, v1alpha1.PhaseProvisioning)
		pulsarReady(ns, rel, pulsar.StatefulSetNames(rel), pulsar.InitJobNames(rel))
		waitPhase(run, v1alpha1.PhaseRunning)
		ownConfig := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: rel + "-bookie-config"}}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(ownConfig), ownConfig)).To(Succeed())

		// The tenant may write Secrets in the run's namespace, not in the
		// operator's.
		tenant := tenantClient(ns)
		err := tenant.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: "forged"}})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "a tenant writing into the operator's namespace: %v", err)

		// While the run is still running, the tenant writes the record of
		// the run's release, with the run's UID: the teardown would delete
		// the victim in another namespace and plant a ConfigMap there.
		manifest := "---\n# Source: pulsar/templates/config.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: victim\n  namespace: " + victimNS + "\n"
		hook := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: planted\n  namespace: " + victimNS + "\n"
		writeAs(tenant, forgedRecord(ns, rel, run.UID, manifest, hook))

		runToSucceeded(run)
		Eventually(func() bool {
			return meta.IsStatusConditionTrue(getRun(run).Status.Conditions, v1alpha1.ConditionTornDown)
		}).Should(BeTrue())

		var after corev1.ConfigMap
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(victim), &after)).To(Succeed(), "the forged record's manifest was deleted")
		Expect(after.UID).To(Equal(victim.UID))
		Expect(after.DeletionTimestamp).To(BeNil())
		err = k8sClient.Get(ctx, types.NamespacedName{Namespace: victimNS, Name: "planted"}, &corev1.ConfigMap{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the forged record's pre-delete hook ran: %v", err)
		// The run's own release went, as it was recorded by the operator.
		Eventually(gone(ownConfig)).Should(BeTrue())
		Expect(helmRecords(operatorNamespace, rel, map[string]string{labelReleaseNamespace: ns})).To(BeEmpty())
		// The forged record is the tenant's: left where it was written.
		Expect(helmRecords(ns, rel, nil)).To(HaveLen(1))
	})

	It("keeps two runs of one name in two namespaces apart: both install, and each teardown removes its own release only", func() {
		nsA, nsB := newNamespace(), newNamespace()
		a, b := validRun(nsA, v1alpha1.SystemPulsar), validRun(nsB, v1alpha1.SystemPulsar)
		for _, r := range []*v1alpha1.BenchmarkRun{a, b} {
			r.GenerateName, r.Name = "", "twin"
			Expect(k8sClient.Create(ctx, r)).To(Succeed())
		}
		rel := pulsar.ReleaseName(a)
		Expect(pulsar.ReleaseName(b)).To(Equal(rel))

		for _, r := range []*v1alpha1.BenchmarkRun{a, b} {
			waitPhase(r, v1alpha1.PhaseProvisioning)
			Eventually(func(g Gomega) {
				records := helmRecords(operatorNamespace, rel, map[string]string{labelReleaseNamespace: r.Namespace})
				g.Expect(records).To(HaveLen(1))
				g.Expect(records[0].Labels).To(HaveKeyWithValue(pulsar.LabelOwner, string(r.UID)))
			}).Should(Succeed(), "the record of %s/%s", r.Namespace, r.Name)
			pulsarReady(r.Namespace, rel, pulsar.StatefulSetNames(rel), pulsar.InitJobNames(rel))
			waitPhase(r, v1alpha1.PhaseRunning)
		}
		Expect(helmRecords(operatorNamespace, rel, nil)).To(HaveLen(2))
		configB := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: nsB, Name: rel + "-bookie-config"}}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(configB), configB)).To(Succeed())

		runToSucceeded(a)
		Eventually(gone(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: nsA, Name: rel + "-bookie-config"}})).Should(BeTrue())
		Eventually(func() []corev1.Secret {
			return helmRecords(operatorNamespace, rel, map[string]string{labelReleaseNamespace: nsA})
		}).Should(BeEmpty())
		Eventually(func() bool {
			return meta.IsStatusConditionTrue(getRun(a).Status.Conditions, v1alpha1.ConditionTornDown)
		}).Should(BeTrue())

		// b's release is untouched: its record, its objects, its run.
		Expect(helmRecords(operatorNamespace, rel, map[string]string{labelReleaseNamespace: nsB})).To(HaveLen(1))
		var stillB corev1.ConfigMap
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(configB), &stillB)).To(Succeed())
		Expect(stillB.UID).To(Equal(configB.UID))
		Expect(getRun(b).Status.Phase).To(Equal(v1alpha1.PhaseRunning))

		runToSucceeded(b)
		Eventually(gone(configB)).Should(BeTrue())
		Eventually(func() []corev1.Secret { return helmRecords(operatorNamespace, rel, nil) }).Should(BeEmpty())
	})
})
