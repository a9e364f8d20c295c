//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// the recipe's disks (docs/on-a-cluster.md), for a cluster without a default StorageClass (the local
// cluster, whose nodes are all this host): the StorageClass local-nvme and a
// static local volume per disk made from config/nodepool as the recipe makes
// them, and freed after a run with the recipe's command
// (freeLocalDisksCommand). The managed specs claim them through
// localDisks and free them between runs with freeLocalDisks; the "disks"
// spec proves a disk serves a second and a third claim without a broker.
//
// The "disks" spec uses the recipe's class itself; every other caller gets a
// class of its own (ownDiskClass), made from the recipe's file with only the
// name changed, so specs that run at once on parallel processes never
// bind, wipe or free each other's disks.

// localDiskClass is README's StorageClass of the local disks.
const localDiskClass = "local-nvme"

// localDisk is a volume localDisks made: its PersistentVolume, its
// StorageClass, its node and the directory on this host that is its disk.
type localDisk struct{ pv, class, node, dir string }

var (
	// localDisksMade are the disks of the localDisks calls whose cleanup
	// has not run yet; freeLocalDisks waits for them and checks them empty.
	localDisksMade []localDisk
	// localDiskSeq numbers the disks, so each call's volumes get new names.
	localDiskSeq int
)

// ownDiskClass is a StorageClass name for one caller of localDisks: README's
// class with this process's namespace and a sequence number.
func ownDiskClass() string {
	return fmt.Sprintf("%s-%s-%d", localDiskClass, testNS, localDiskSeq)
}

// localDisks returns the StorageClass a spec's claims use: "" (the
// cluster's default) when the cluster has a default StorageClass (kind's
// local-path provisioner), else class (README's local-nvme, or a class of
// the caller's own, ownDiskClass) with perNode local volumes of size on
// each of nodes, made as README says: `kubectl apply -f` of the
// StorageClass, then per disk README's sed of
// config/nodepool/local-nvme-pv.yaml for its node, with the disk's name, a
// fresh directory of a temporary directory of this host as its path, and
// size. Every node of such a cluster is this host (the local cluster), so
// each node's disks are directories here, laid out as README's recipe lays
// them out on the nodes, with the temporary directory for /mnt: disk
// nvme<n> of node <node> at <tmp>/nvme<n>/<node>, a path per node, so
// nodes sharing this host never share a disk.
// They are removed, with the directories, when the calling container (or
// spec) ends.
func localDisks(ctx context.Context, class string, perNode int, size string, nodes ...string) string {
	var classes storagev1.StorageClassList
	Expect(k8s.List(ctx, &classes)).To(Succeed())
	for _, c := range classes.Items {
		if c.Annotations["storageclass.kubernetes.io/is-default-class"] == "true" {
			logf("claims get volumes of the cluster's default StorageClass %s", c.Name)
			return ""
		}
	}
	Expect(nodes).NotTo(BeEmpty(), "localDisks needs the nodes to put disks on")
	Expect(nodesAreThisHost(ctx)).To(BeTrue(), "a cluster without a default StorageClass must be the local cluster, whose nodes are this host")

	By(fmt.Sprintf("making %d local disks of %s and class %s on each of %s as README does (config/nodepool)", perNode, size, class, strings.Join(nodes, ", ")))
	classExisted := k8s.Get(ctx, client.ObjectKey{Name: class}, &storagev1.StorageClass{}) == nil
	classFile := filepath.Join(repoRoot, "config", "nodepool", "storageclass-local-nvme.yaml")
	if class == localDiskClass {
		kubectl(nil, "apply", "-f", classFile)
	} else {
		raw, err := os.ReadFile(classFile)
		Expect(err).NotTo(HaveOccurred())
		old := "name: " + localDiskClass + "\n"
		Expect(strings.Count(string(raw), old)).To(Equal(1), "%s has no single %q", classFile, old)
		kubectl([]byte(strings.Replace(string(raw), old, "name: "+class+"\n", 1)), "apply", "-f", "-")
	}
	base, err := os.MkdirTemp("", "streambench-e2e-disks-")
	Expect(err).NotTo(HaveOccurred())
	Expect(os.Chmod(base, 0o755)).To(Succeed())
	var made []localDisk
	DeferCleanup(func(ctx SpecContext) {
		By(fmt.Sprintf("removing the %d local disks and %s", len(made), base))
		for _, d := range made {
			_ = k8s.Delete(ctx, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: d.pv}})
		}
		Eventually(func(g Gomega) {
			for _, d := range made {
				var pv corev1.PersistentVolume
				err := k8s.Get(ctx, client.ObjectKey{Name: d.pv}, &pv)
				g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "volume %s still there, %s, claim %v", d.pv, pv.Status.Phase, pv.Spec.ClaimRef)
			}
		}).WithTimeout(2 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		localDisksMade = slices.DeleteFunc(localDisksMade, func(d localDisk) bool { return slices.Contains(made, d) })
		Expect(os.RemoveAll(base)).To(Succeed())
		if !classExisted {
			_, _ = kubectlE(nil, "delete", "storageclass", class, "--ignore-not-found")
		}
	}, NodeTimeout(3*time.Minute))

	// README's command, without its `| kubectl apply -f -`: the template's
	// one disk is copied per disk below.
	var readmeSed string
	for _, c := range readmeCommands {
		if strings.Contains(c, "config/nodepool/local-nvme-pv.yaml") {
			readmeSed, _, _ = strings.Cut(c, " | kubectl apply -f -")
		}
	}
	Expect(readmeSed).To(HavePrefix("sed "), "README's command that makes the volumes")
	for _, node := range nodes {
		made = append(made, nodeDisks(ctx, readmeSed, node, class, perNode, size, base)...)
	}
	return class
}

// nodeDisks makes perNode of localDisks' volumes on node from README's sed
// command, each disk at <mnt>/nvme<n>/<node> as README's is at
// /mnt/nvme0/<node>.
func nodeDisks(ctx context.Context, readmeSed, node, class string, perNode int, size, mnt string) []localDisk {
	sed := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", fill(readmeSed, node))
	sed.Dir = repoRoot
	out, err := sed.Output()
	Expect(err).NotTo(HaveOccurred(), "%s", readmeSed)
	template := string(out)
	var made []localDisk
	for range perNode {
		name := fmt.Sprintf("local-nvme-%s-%s-nvme%d", node, testNS, localDiskSeq)
		mount := filepath.Join(mnt, fmt.Sprintf("nvme%d", localDiskSeq))
		disk := filepath.Join(mount, node)
		localDiskSeq++
		Expect(os.Mkdir(mount, 0o755)).To(Succeed())
		// Brokers run as users of their own (Kafka 1001): the directory is
		// the disk's root, open to them.
		Expect(os.Mkdir(disk, 0o777)).To(Succeed())
		Expect(os.Chmod(disk, 0o777)).To(Succeed())
		pv := template
		for _, r := range []struct{ old, new string }{
			{"name: local-nvme-" + node + "-nvme0\n", "name: " + name + "\n"},
			{"path: /mnt/nvme0/" + node + "\n", "path: " + disk + "\n"},
			{"storage: 1Ti\n", "storage: " + size + "\n"},
			{"storageClassName: " + localDiskClass + "\n", "storageClassName: " + class + "\n"},
		} {
			Expect(strings.Count(pv, r.old)).To(Equal(1), "README's sed of config/nodepool/local-nvme-pv.yaml has no single %q:\n%s", r.old, template)
			pv = strings.Replace(pv, r.old, r.new, 1)
		}
		kubectl([]byte(pv), "apply", "-f", "-")
		made = append(made, localDisk{pv: name, class: class, node: node, dir: disk})
		localDisksMade = append(localDisksMade, localDisk{pv: name, class: class, node: node, dir: disk})

		var got corev1.PersistentVolume
		Expect(k8s.Get(ctx, client.ObjectKey{Name: name}, &got)).To(Succeed())
		Expect(got.Spec.PersistentVolumeReclaimPolicy).To(Equal(corev1.PersistentVolumeReclaimRetain),
			"README's volumes are Retain: a static local volume has no deleter")
		Expect(got.Spec.StorageClassName).To(Equal(class))
		Expect(got.Spec.Capacity.Storage().Cmp(resource.MustParse(size))).To(Equal(0))
	}
	return made
}

// freeLocalDisks is what README says to do after a run: once no claim
// holds a disk localDisks made, it runs freeLocalDisksCommand as written
// (KUBECTL and KUBECONFIG the suite's; for a class of the caller's own,
// with that class) once per node that has disks, here, as every node is
// this host; then no volume of the class may be left Released or Failed,
// and the disks are empty. Call it between runs. Without local disks (a
// default StorageClass, whose provisioner deletes released volumes) it
// does nothing.
func freeLocalDisks(ctx context.Context) {
	if len(localDisksMade) == 0 {
		return
	}
	Eventually(func(g Gomega) {
		for _, d := range localDisksMade {
			var pv corev1.PersistentVolume
			g.Expect(k8s.Get(ctx, client.ObjectKey{Name: d.pv}, &pv)).To(Succeed())
			g.Expect(pv.Status.Phase).NotTo(Equal(corev1.VolumeBound), "volume %s is still bound to %v: the run's claims must be gone", d.pv, pv.Spec.ClaimRef)
		}
	}).WithContext(ctx).WithTimeout(5 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())

	// README's command per class and per node, on that node: every node
	// of the local cluster is this host.
	var classes []string
	type classNode struct{ class, node string }
	var runs []classNode
	for _, d := range localDisksMade {
		if !slices.Contains(classes, d.class) {
			classes = append(classes, d.class)
		}
		if !slices.Contains(runs, classNode{d.class, d.node}) {
			runs = append(runs, classNode{d.class, d.node})
		}
	}
	for _, r := range runs {
		command := fill(freeLocalDisksCommandFor(r.class), r.node)
		By("freeing the local disks as README says: " + command)
		cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", command)
		cmd.Dir = repoRoot
		cmd.Env = append(os.Environ(), "KUBECTL="+kubectlBin, "KUBECONFIG="+kubeconfig)
		out, err := cmd.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "%s:\n%s", command, out)
		logf("%s", strings.TrimSpace(string(out)))
	}

	Eventually(func(g Gomega) {
		var pvs corev1.PersistentVolumeList
		g.Expect(k8s.List(ctx, &pvs)).To(Succeed())
		for _, pv := range pvs.Items {
			if slices.Contains(classes, pv.Spec.StorageClassName) {
				g.Expect(pv.Status.Phase).NotTo(BeElementOf(corev1.VolumeReleased, corev1.VolumeFailed),
					"volume %s after %s: %s", pv.Name, freeLocalDisksCommandFor(pv.Spec.StorageClassName), pv.Status.Message)
			}
		}
	}).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
	for _, d := range localDisksMade {
		entries, err := os.ReadDir(d.dir)
		Expect(err).NotTo(HaveOccurred(), "the wipe keeps the disk's directory")
		Expect(entries).To(BeEmpty(), "the wipe left files on %s (%s)", d.pv, d.dir)
	}
}

// freeLocalDisksCommandFor is README's command (freeLocalDisksCommand) for
// the disks of class: the same command, its class argument replaced.
func freeLocalDisksCommandFor(class string) string {
	return strings.Replace(freeLocalDisksCommand, " "+localDiskClass+" ", " "+class+" ", 1)
}

var _ = Describe("README's local disks", Label("disks"), func() {
	It("serve a second and a third claim once freed as README says", func(ctx SpecContext) {
		class := localDisks(ctx, localDiskClass, 1, "1Gi", schedulableNodes(ctx)[0].Name)
		if class == "" {
			notChecked("README's local disks served to a second and a third claim once freed", "the cluster has a default StorageClass")
			Skip("the cluster has a default StorageClass: README's local disks are for clusters without one, whose node is this host")
		}
		disk := localDisksMade[len(localDisksMade)-1]
		for use := 1; use <= 3; use++ {
			By(fmt.Sprintf("use %d: a pod's claim of class %s binds the disk %s", use, class, disk.pv))
			claim := &corev1.PersistentVolumeClaim{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("e2e-disk-use%d", use), Namespace: testNS},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					StorageClassName: &class,
					Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
				},
			}
			Expect(k8s.Create(ctx, claim)).To(Succeed())
			// WaitForFirstConsumer: the claim binds when a pod using it is
			// scheduled. The image is distroless; `streambench version`
			// starts and ends, with the disk mounted.
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: claim.Name, Namespace: testNS},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ptr.To(true),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name: "use", Image: image, ImagePullPolicy: corev1.PullIfNotPresent, Args: []string{"version"},
						VolumeMounts: []corev1.VolumeMount{{Name: "disk", MountPath: "/disk"}},
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: ptr.To(false),
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
					}},
					Volumes: []corev1.Volume{{Name: "disk", VolumeSource: corev1.VolumeSource{
						PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim.Name}}}},
				},
			}
			Expect(k8s.Create(ctx, pod)).To(Succeed())
			Eventually(func(g Gomega) {
				g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
				if pod.Status.Phase == corev1.PodFailed {
					StopTrying(fmt.Sprintf("pod %s failed: %s", pod.Name, podSummary(testNS))).Now()
				}
				g.Expect(pod.Status.Phase).To(Equal(corev1.PodSucceeded), "pods: %s", podSummary(testNS))
			}).WithTimeout(5 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
			Expect(k8s.Get(ctx, client.ObjectKeyFromObject(claim), claim)).To(Succeed())
			Expect(claim.Status.Phase).To(Equal(corev1.ClaimBound))
			Expect(claim.Spec.VolumeName).To(Equal(disk.pv), "use %d binds the same disk", use)
			entries, err := os.ReadDir(disk.dir)
			Expect(err).NotTo(HaveOccurred())
			Expect(entries).To(BeEmpty(), "use %d finds the data of the use before", use)

			By("leaving what a broker leaves: a file, and a folder of a file, of another user (Kafka's 1001)")
			Expect(os.WriteFile(filepath.Join(disk.dir, "meta.properties"), []byte("cluster.id=use"+fmt.Sprint(use)+"\n"), 0o644)).To(Succeed())
			Expect(os.Mkdir(filepath.Join(disk.dir, "kafka-log0"), 0o755)).To(Succeed())
			Expect(os.WriteFile(filepath.Join(disk.dir, "kafka-log0", "00000000000000000000.log"), []byte("x"), 0o644)).To(Succeed())
			for _, f := range []string{"meta.properties", "kafka-log0/00000000000000000000.log", "kafka-log0"} {
				Expect(os.Chown(filepath.Join(disk.dir, f), 1001, 0)).To(Succeed())
			}

			By("deleting the pod and the claim, as a run's teardown does: the volume is Released, not deleted or Failed")
			Expect(k8s.Delete(ctx, pod)).To(Succeed())
			Expect(k8s.Delete(ctx, claim)).To(Succeed())
			Eventually(func(g Gomega) {
				err := k8s.Get(ctx, client.ObjectKeyFromObject(claim), &corev1.PersistentVolumeClaim{})
				g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "claim %s still there", claim.Name)
				var pv corev1.PersistentVolume
				g.Expect(k8s.Get(ctx, client.ObjectKey{Name: disk.pv}, &pv)).To(Succeed())
				g.Expect(pv.Status.Phase).To(Equal(corev1.VolumeReleased), pv.Status.Message)
			}).WithTimeout(3 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())

			freeLocalDisks(ctx)
			var pv corev1.PersistentVolume
			Expect(k8s.Get(ctx, client.ObjectKey{Name: disk.pv}, &pv)).To(Succeed())
			Expect(pv.Status.Phase).To(Equal(corev1.VolumeAvailable))
			Expect(pv.Spec.ClaimRef).To(BeNil())
		}
	}, SpecTimeout(20*time.Minute))
})
