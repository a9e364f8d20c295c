// Package probe builds the testbed Jobs of a run: a probe Job per broker
// (or bookie) node, on a volume of the brokers' StorageClass when that
// class provisions volumes on demand (PlanFor); a probe Job on the
// workers' pool for existing clusters; and the privileged Job that drops
// a node's page cache, in the operator's namespace. Builders are pure;
// the controller reads the StorageClasses, finds the nodes, creates the
// Jobs and reads the probes' termination messages.
package probe

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"sort"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/privileged"
	"github.com/streambench/streambench-operator/internal/provision/workers"
)

// Roles of the testbed's pods (the workers package's LabelRole).
const (
	RoleProbe     = "probe"
	RoleDropCache = "drop-page-cache"
)

// AnnotationNode names the node a Job is pinned to: node names can be
// longer than a label value may be.
const AnnotationNode = "streambench.io/node"

// ClaimSize is each probe volume's size: the sequential test writes at
// most 256 MiB, and a provisioner may round up.
var ClaimSize = resource.MustParse("1Gi")

// Deadline bounds a probe Job: two tests of at most 20 s per volume, plus
// scheduling, pulling the image and provisioning the volumes. A node whose
// volume cannot be provisioned (a provisioner that fails, a full pool)
// fails its Job here, and the run records it as not measured; a static
// class is not claimed at all (PlanFor).
const Deadline = 5 * 60

// nonRootUID is the distroless image's nonroot user; fsGroup makes the
// probe volumes writable for it.
const nonRootUID = 65532

// Volume is one volume to probe: its role and StorageClass.
type Volume struct {
	Name             string
	StorageClassName *string
}

// Volumes are the volumes a broker node's probe writes to: Kafka's log
// directories (data, and each JBOD directory whose class differs), or a
// bookie's journal and ledgers. The same StorageClass as the brokers', so
// the probe measures the kind of disk the brokers write to. PlanFor says
// which of them a probe may claim.
func Volumes(run *v1alpha1.BenchmarkRun) []Volume {
	m := run.Spec.Cluster.Managed
	if m == nil {
		return []Volume{{Name: "scratch"}}
	}
	if run.Spec.System == v1alpha1.SystemPulsar {
		return []Volume{
			{Name: "journal", StorageClassName: m.Storage.Journal.StorageClassName},
			{Name: "ledgers", StorageClassName: m.Storage.Ledgers.StorageClassName},
		}
	}
	out := []Volume{{Name: "data", StorageClassName: m.Storage.Data.StorageClassName}}
	seen := map[string]bool{className(m.Storage.Data.StorageClassName): true}
	for i, v := range m.Storage.AdditionalData {
		// Volumes of one class are the same kind of disk: one probe says
		// what it is; another class gets its own.
		if c := className(v.StorageClassName); !seen[c] {
			seen[c] = true
			out = append(out, Volume{Name: fmt.Sprintf("data-%d", i+1), StorageClassName: v.StorageClassName})
		}
	}
	return out
}

func className(c *string) string {
	if c == nil {
		return ""
	}
	return *c
}

// JobName is the probe Job of one node: <run>-probe-<hash of the node>
// (a run name has at most 40 characters, so this fits a label value).
func JobName(run *v1alpha1.BenchmarkRun, node string) string {
	return fmt.Sprintf("%s-probe-%s", run.Name, nodeHash(node))
}

// DropCacheJobName is the page-cache Job of one node before the load.
func DropCacheJobName(run *v1alpha1.BenchmarkRun, node string) string {
	return DropCacheJobNameFor(run, node, 0)
}

// DropCacheJobNameFor is the page-cache Job of one node for the
// coordinator's mid-run request seq (0: the drop before the load), in the
// operator's namespace: its suffix hashes the run's UID with the node, so
// runs of one name in two namespaces never share one. Each request has
// its own names, so a new request never meets the previous one's Jobs
// still being deleted, and a restarted operator finds the Jobs of the
// request it was answering. At most 40 + 10 + 3 + 1 + 8 characters for
// seq < 1000 (the operator answers at most spec.repeats: pagecache.MaxRequests):
// a label value still.
func DropCacheJobNameFor(run *v1alpha1.BenchmarkRun, node string, seq int32) string {
	if seq == 0 {
		return fmt.Sprintf("%s-dropcache-%s", run.Name, privileged.Suffix(run, node))
	}
	return fmt.Sprintf("%s-dropcache%d-%s", run.Name, seq, privileged.Suffix(run, node))
}

// WorkerPoolJobName is the probe Job of an existing-cluster run.
func WorkerPoolJobName(run *v1alpha1.BenchmarkRun) string { return run.Name + "-probe" }

func nodeHash(node string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(node))
	return fmt.Sprintf("%08x", h.Sum32())
}

func labels(run *v1alpha1.BenchmarkRun, role string) map[string]string {
	return map[string]string{workers.LabelRun: run.Name, workers.LabelRole: role, workers.LabelManagedBy: "streambench"}
}

// onNode is a required affinity to exactly one node by name. Affinity, not
// spec.nodeName: the scheduler must place the pod, so that a
// WaitForFirstConsumer volume is provisioned on that node.
func onNode(node string) *corev1.Affinity {
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
		}}},
	}}
}

func tolerations(p v1alpha1.Placement) []corev1.Toleration {
	var out []corev1.Toleration
	for _, t := range p.Tolerations {
		out = append(out, *t.DeepCopy())
	}
	return out
}

// NodeJob probes one broker node: pinned to it, tolerating what the
// brokers tolerate, with one ephemeral volume per entry of vols (a Plan's
// Volumes: a PVC of the brokers' StorageClass that lives and goes with
// the pod). The result is the container's termination message (JSON of a
// v1alpha1.NodeProbe); the probe runs as non-root with no capabilities.
func NodeJob(run *v1alpha1.BenchmarkRun, image, node string, roles []string, vols []Volume) *batchv1.Job {
	var placement v1alpha1.Placement
	if m := run.Spec.Cluster.Managed; m != nil {
		placement = m.Placement
	}
	spec := podSpec(run, image, vols, true)
	spec.Affinity = onNode(node)
	spec.Tolerations = tolerations(placement)
	job := job(run, JobName(run, node), RoleProbe, spec)
	job.Annotations = map[string]string{AnnotationNode: node, AnnotationRoles: encodeRoles(roles)}
	return job
}

// AnnotationRoles says what the probed node runs (broker, bookie), as JSON.
const AnnotationRoles = "streambench.io/roles"

func encodeRoles(roles []string) string {
	r := append([]string(nil), roles...)
	sort.Strings(r)
	b, _ := json.Marshal(r)
	return string(b)
}

// DecodeRoles reads AnnotationRoles; nil for a missing or bad value.
func DecodeRoles(s string) []string {
	var r []string
	if json.Unmarshal([]byte(s), &r) != nil {
		return nil
	}
	return r
}

// WorkerPoolJob probes a node of the workers' pool, on an emptyDir: for an
// existing cluster the brokers' nodes are not known, so this says what the
// load generator stands on, and the run says the brokers' disks were not
// measured.
func WorkerPoolJob(run *v1alpha1.BenchmarkRun, image string) *batchv1.Job {
	p := run.Spec.Workers.Placement
	spec := podSpec(run, image, []Volume{{Name: "scratch"}}, false)
	spec.NodeSelector = p.NodeSelector
	spec.Affinity = p.Affinity.DeepCopy()
	spec.Tolerations = tolerations(p)
	return job(run, WorkerPoolJobName(run), RoleProbe, spec)
}

func podSpec(run *v1alpha1.BenchmarkRun, image string, vols []Volume, ephemeral bool) corev1.PodSpec {
	args := []string{"probe", "--node=$(NODE_NAME)", "--termination-log=" + corev1.TerminationMessagePathDefault}
	var volumes []corev1.Volume
	var mounts []corev1.VolumeMount
	for _, v := range vols {
		path := "/probe/" + v.Name
		args = append(args, fmt.Sprintf("--volume=%s=%s", v.Name, path))
		mounts = append(mounts, corev1.VolumeMount{Name: v.Name, MountPath: path})
		src := corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
		if ephemeral {
			src = corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
				VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{
					ObjectMeta: metav1.ObjectMeta{Labels: labels(run, RoleProbe)},
					Spec: corev1.PersistentVolumeClaimSpec{
						AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
						StorageClassName: v.StorageClassName,
						Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: ClaimSize}},
					},
				},
			}}
		}
		volumes = append(volumes, corev1.Volume{Name: v.Name, VolumeSource: src})
	}
	return corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		SecurityContext: &corev1.PodSecurityContext{
			FSGroup:        ptr.To[int64](nonRootUID),
			RunAsNonRoot:   ptr.To(true),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Containers: []corev1.Container{{
			Name:            "probe",
			Image:           image,
			ImagePullPolicy: corev1.PullIfNotPresent,
			Args:            args,
			Env: []corev1.EnvVar{{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{
				FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}},
			VolumeMounts: mounts,
			// File, not FallbackToLogsOnError: the message is the result,
			// and a failed probe writes its error into the same JSON.
			TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			SecurityContext: &corev1.SecurityContext{
				AllowPrivilegeEscalation: ptr.To(false),
				RunAsUser:                ptr.To[int64](nonRootUID),
				Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			},
		}},
		Volumes: volumes,
	}
}

func job(run *v1alpha1.BenchmarkRun, name, role string, spec corev1.PodSpec) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: run.Namespace, Labels: labels(run, role)},
		Spec: batchv1.JobSpec{
			BackoffLimit:          ptr.To[int32](0),
			ActiveDeadlineSeconds: ptr.To[int64](Deadline),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels(run, role)},
				Spec:       spec,
			},
		},
	}
}

// DropCacheDeadline bounds a page-cache Job (seconds): scheduling,
// pulling the image, a sync of the node's dirty pages and the drop.
const DropCacheDeadline = 120

// DropCacheJob drops the page cache of one node. It is privileged: the
// kernel accepts writes to /proc/sys/vm/drop_caches only from a
// privileged container (root with a writable /proc/sys). So it runs in
// namespace, the operator's, never the run's (internal/provision/privileged
// says why), labelled with the run's UID, namespace and name instead of
// an owner reference; hence the Pod Security check of that namespace
// before a run that asks for it (privileged.Allowed).
func DropCacheJob(run *v1alpha1.BenchmarkRun, namespace, image, node string) *batchv1.Job {
	return DropCacheJobFor(run, namespace, image, node, 0)
}

// AnnotationDropSeq is the mid-run request a page-cache Job answers.
const AnnotationDropSeq = "streambench.io/page-cache-drop-seq"

// DropCacheJobFor is DropCacheJob for the coordinator's request seq (0:
// the drop before the load). Its node is one of the run's broker nodes,
// which the operator finds from the brokers' pods: a request names no
// node.
func DropCacheJobFor(run *v1alpha1.BenchmarkRun, namespace, image, node string, seq int32) *batchv1.Job {
	var placement v1alpha1.Placement
	if m := run.Spec.Cluster.Managed; m != nil {
		placement = m.Placement
	}
	spec := corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Affinity:      onNode(node),
		Tolerations:   tolerations(placement),
		Containers: []corev1.Container{{
			Name:                     "drop-page-cache",
			Image:                    image,
			ImagePullPolicy:          corev1.PullIfNotPresent,
			Args:                     []string{"drop-page-cache"},
			TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
			SecurityContext: &corev1.SecurityContext{
				Privileged: ptr.To(true),
				RunAsUser:  ptr.To[int64](0),
			},
		}},
	}
	j := job(run, DropCacheJobNameFor(run, node, seq), RoleDropCache, spec)
	j.Namespace = namespace
	j.Labels, j.Spec.Template.Labels = privileged.Labels(run, RoleDropCache), privileged.Labels(run, RoleDropCache)
	j.Spec.ActiveDeadlineSeconds = ptr.To[int64](DropCacheDeadline)
	j.Annotations = map[string]string{AnnotationNode: node, AnnotationDropSeq: fmt.Sprint(seq)}
	return j
}

// ParseResult reads a probe container's termination message.
func ParseResult(message string) (v1alpha1.NodeProbe, error) {
	var out v1alpha1.NodeProbe
	if err := json.Unmarshal([]byte(message), &out); err != nil {
		return out, fmt.Errorf("the probe's termination message is not its JSON result: %w", err)
	}
	return out, nil
}
