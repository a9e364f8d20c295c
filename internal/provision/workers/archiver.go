package workers

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/protocol"
)

// RoleArchiver labels a run's archiver Job and its pods.
const RoleArchiver = "archiver"

// ArchiverName is the run's archiver Job.
func ArchiverName(run *v1alpha1.BenchmarkRun) string { return run.Name + "-archive" }

// ResultsMount is where the archiver's pod finds the results ConfigMap's
// keys, one file each (data and binaryData alike).
const ResultsMount = "/results"

// Environment variables the archiver reads spec.results.archive's
// credentials from: the AWS SDK's own names, so `streambench archive`
// takes them as every S3 client does.
const (
	EnvAccessKeyID     = "AWS_ACCESS_KEY_ID"
	EnvSecretAccessKey = "AWS_SECRET_ACCESS_KEY"
	EnvSessionToken    = "AWS_SESSION_TOKEN"
)

// ArchiverJob copies the run's results ConfigMap to spec.results.archive
// at runPath (archive.RunPath): `streambench archive --from-configmap`
// in a pod of the run's namespace. The upload goes from there, not from
// the operator, so a tenant who names an endpoint reaches with it only
// what a pod of their own namespace reaches, and the credentials are a
// Secret of that namespace read by the kubelet, as for any pod there
// (docs/security.md). The pod has no API token: the ConfigMap is mounted,
// and every attempt's outcome is its termination message. The Job tries
// ArchiveAttempts times.
func ArchiverJob(run *v1alpha1.BenchmarkRun, defaultImage string, a v1alpha1.ArchiveSpec, runPath string) *batchv1.Job {
	args := []string{"archive", ResultsMount, "--from-configmap", "--to=" + a.URL, "--path=" + runPath}
	if a.Endpoint != "" {
		args = append(args, "--endpoint="+a.Endpoint)
	}
	if a.Region != "" {
		args = append(args, "--region="+a.Region)
	}
	if a.PathStyle {
		args = append(args, "--path-style")
	}
	var env []corev1.EnvVar
	if s := a.CredentialsSecret; s != "" {
		key := func(name, key string, optional bool) corev1.EnvVar {
			return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: s}, Key: key, Optional: ptr.To(optional),
			}}}
		}
		env = append(env, key(EnvAccessKeyID, v1alpha1.ArchiveAccessKeyID, false),
			key(EnvSecretAccessKey, v1alpha1.ArchiveSecretAccessKey, false),
			key(EnvSessionToken, v1alpha1.ArchiveSessionToken, true))
	}
	env = append(env, corev1.EnvVar{Name: protocol.TerminationLogEnv, Value: corev1.TerminationMessagePathDefault})
	p := run.Spec.Workers.Placement
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: ArchiverName(run), Namespace: run.Namespace, Labels: labels(run, RoleArchiver)},
		Spec: batchv1.JobSpec{
			// One pod per attempt, each a fresh upload that skips what an
			// earlier one wrote (the archive never overwrites).
			BackoffLimit:          ptr.To[int32](v1alpha1.ArchiveAttempts - 1),
			ActiveDeadlineSeconds: ptr.To(int64((10 * time.Minute).Seconds())),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels(run, RoleArchiver)},
				Spec: corev1.PodSpec{
					RestartPolicy:                corev1.RestartPolicyNever,
					NodeSelector:                 p.NodeSelector,
					Affinity:                     p.Affinity,
					Tolerations:                  p.Tolerations,
					AutomountServiceAccountToken: ptr.To(false),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ptr.To(true),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name:                     RoleArchiver,
						Image:                    image(run, defaultImage),
						ImagePullPolicy:          corev1.PullIfNotPresent,
						Args:                     args,
						Env:                      env,
						TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: ptr.To(false),
							RunAsNonRoot:             ptr.To(true),
							ReadOnlyRootFilesystem:   ptr.To(true),
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
							Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
						},
						VolumeMounts: []corev1.VolumeMount{{Name: "results", MountPath: ResultsMount, ReadOnly: true}},
					}},
					Volumes: []corev1.Volume{{Name: "results", VolumeSource: corev1.VolumeSource{
						ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: ResultsName(run)}},
					}}},
				},
			},
		},
	}
}
