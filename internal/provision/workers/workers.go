// Package workers builds the load generator's Kubernetes objects for a run:
// a headless Service, an Indexed Job of workers behind it, the coordinator Job
// that drives them, and the coordinator's permission to write the results
// ConfigMap. Builders are pure; the controller sets owner references.
package workers

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/faults"
	"github.com/streambench/streambench-operator/internal/protocol"
	"github.com/streambench/streambench-operator/internal/provision/clientsecurity"
	"github.com/streambench/streambench-operator/internal/workload"
)

// Port is the workers' HTTP API port.
const Port = 8080

// Labels on everything a run creates.
const (
	LabelRun       = "streambench.io/run"
	LabelRole      = "streambench.io/role"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	RoleWorker     = "worker"
	RoleCoord      = "coordinator"
)

// Names of a run's objects.
func ServiceName(run *v1alpha1.BenchmarkRun) string     { return run.Name + "-workers" }
func WorkerJobName(run *v1alpha1.BenchmarkRun) string   { return run.Name + "-workers" }
func CoordinatorName(run *v1alpha1.BenchmarkRun) string { return run.Name + "-coordinator" }
func ResultsName(run *v1alpha1.BenchmarkRun) string     { return run.Name + "-results" }
func TokenName(run *v1alpha1.BenchmarkRun) string       { return run.Name + "-token" }

// TokenKey is the key of the run's token in its Secret.
const TokenKey = "token"

// TokenSecret holds the run's token: the workers take commands only from
// a caller that presents it, the run's coordinator (internal/worker).
// token is drawn by the controller (crypto/rand); the builder stays pure.
func TokenSecret(run *v1alpha1.BenchmarkRun, token string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: TokenName(run), Namespace: run.Namespace, Labels: labels(run, RoleCoord)},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{TokenKey: []byte(token)},
	}
}

// CoordinatorGrace is the coordinator pod's termination grace period. On
// SIGTERM (a deleted or evicted pod, the Job's deadline) the coordinator
// still reads the last stats, stops the workers and deletes the topics
// (bounded by coordinator.CleanupTimeout, 3 minutes) and then writes its
// results (bounded by a minute, finalWriteTimeout in cmd/streambench).
// Measured on the local cluster (make test-e2e, test/e2e/faults_test.go):
// from the coordinator pod's deletion to its final results in the
// ConfigMap, cleanup included, 39 s; the write itself 74 ms; a cleanup
// against brokers that had stopped ran into its calls' timeouts (over a
// minute). The grace covers both bounds, not
// the measured times, so a slow broker or API server still leaves the
// results written.
const CoordinatorGrace = 4*time.Minute + 15*time.Second

// WorkerGrace lets a worker answer the coordinator's last calls (the
// final stats read, stop, topic deletion: each at most 2 minutes) after
// SIGTERM, while the coordinator finishes. The worker drains that long at
// most: it leaves as soon as the coordinator asks it to, or after
// worker.DefaultDrainIdle without a call (worker.ServeDraining).
const WorkerGrace = CoordinatorGrace

// CoordinatorDeadline is how long the coordinator runs the workload
// before it stops by itself: the Jobs' deadline less the grace its final
// write needs, so it writes its results before the Job is ended.
func CoordinatorDeadline(run *v1alpha1.BenchmarkRun) time.Duration {
	return max(RunDeadline(run)-CoordinatorGrace, RunDeadline(run)/2)
}

// RunID names the run's topics and subscriptions: unique per object (its
// UID), so reruns never read each other's messages.
func RunID(run *v1alpha1.BenchmarkRun) string {
	id := strings.ReplaceAll(string(run.UID), "-", "")
	if len(id) > 12 {
		id = id[:12]
	}
	return id
}

func labels(run *v1alpha1.BenchmarkRun, role string) map[string]string {
	return map[string]string{LabelRun: run.Name, LabelRole: role, LabelManagedBy: "streambench"}
}

// Service is the headless Service that gives the coordinator the workers'
// pod addresses (and each pod a DNS name through the Job's subdomain).
func Service(run *v1alpha1.BenchmarkRun) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: ServiceName(run), Namespace: run.Namespace, Labels: labels(run, RoleWorker)},
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			Selector:                 labels(run, RoleWorker),
			PublishNotReadyAddresses: true,
			Ports:                    []corev1.ServicePort{{Name: "http", Port: Port}},
		},
	}
}

// RunDeadline bounds the worker and coordinator Jobs: the workload's
// deadline (workload.RunDeadline), which the coordinator and local mode use
// too. A repeated run (spec.repeats) gets it once per repeat: spec.timeouts.run
// bounds each repeat, as in local mode.
func RunDeadline(run *v1alpha1.BenchmarkRun) time.Duration {
	d := workload.RunDeadline(run.Spec.Workload, run.Spec.Timeouts)
	n := time.Duration(run.Spec.RepeatCount())
	if d > math.MaxInt64/n {
		return math.MaxInt64
	}
	return d * n
}

func image(run *v1alpha1.BenchmarkRun, defaultImage string) string {
	if run.Spec.Workers.Image != "" {
		return run.Spec.Workers.Image
	}
	return defaultImage
}

func workerCount(run *v1alpha1.BenchmarkRun) int32 {
	if run.Spec.Workers.Count > 0 {
		return run.Spec.Workers.Count
	}
	return 2
}

// podSpec is a load pod that meets the Pod Security Standard
// "restricted": non-root, no privilege escalation, no capabilities, the
// runtime's default seccomp profile, a read-only root file system (an
// emptyDir at /tmp for what a client library may write) and no
// ServiceAccount token unless the pod talks to the API server. It carries
// the run's token from the run's Secret.
func podSpec(run *v1alpha1.BenchmarkRun, c corev1.Container, apiAccess bool, grace time.Duration) corev1.PodSpec {
	p := run.Spec.Workers.Placement
	c.ImagePullPolicy = corev1.PullIfNotPresent
	// The command writes the error it fails with to the termination
	// message file (protocol.TerminationLogEnv), so status.message of a
	// failed run says why (e.g. brokers unreachable), not only the exit
	// code; a crash that writes nothing leaves the log's last lines.
	c.TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
	c.Env = append(c.Env, corev1.EnvVar{Name: protocol.TerminationLogEnv, Value: corev1.TerminationMessagePathDefault})
	c.SecurityContext = &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		RunAsNonRoot:             ptr.To(true),
		ReadOnlyRootFilesystem:   ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
	c.Env = append(c.Env, corev1.EnvVar{Name: protocol.TokenEnv, ValueFrom: &corev1.EnvVarSource{
		SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: TokenName(run)}, Key: TokenKey},
	}})
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: tmpVolume, MountPath: "/tmp"})
	return corev1.PodSpec{
		RestartPolicy:                 corev1.RestartPolicyNever,
		NodeSelector:                  p.NodeSelector,
		Affinity:                      p.Affinity,
		Tolerations:                   p.Tolerations,
		Containers:                    []corev1.Container{c},
		AutomountServiceAccountToken:  ptr.To(apiAccess),
		TerminationGracePeriodSeconds: ptr.To(int64(grace.Seconds())),
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot:   ptr.To(true),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Volumes: []corev1.Volume{{Name: tmpVolume, VolumeSource: corev1.VolumeSource{
			EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("256Mi"))},
		}}},
	}
}

const tmpVolume = "tmp"

// workerResources is spec.workers.resources, or, when it gives none, a
// memory limit so a worker cannot take a node's memory (the payload pool
// is bounded by validation; the clients' buffers are not). No CPU limit:
// throttling would show up as latency and be measured as the broker's.
func workerResources(run *v1alpha1.BenchmarkRun) corev1.ResourceRequirements {
	r := run.Spec.Workers.Resources
	if len(r.Requests) > 0 || len(r.Limits) > 0 || len(r.Claims) > 0 {
		return r
	}
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")},
	}
}

// coordinatorResources bounds the coordinator: it holds every snapshot of
// the run in memory (a few MiB for an hour) and builds the results
// ConfigMap (at most 1 MiB) from them.
var coordinatorResources = corev1.ResourceRequirements{
	Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
	Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
}

// WorkerJob is an Indexed Job of spec.workers.count workers. A worker that
// fails is not retried (backoffLimit 0): a restarted worker would have lost
// its producers' state, so the run fails with the reason instead.
func WorkerJob(run *v1alpha1.BenchmarkRun, defaultImage string) *batchv1.Job {
	n := workerCount(run)
	spec := podSpec(run, corev1.Container{
		Name:      "worker",
		Image:     image(run, defaultImage),
		Args:      []string{"worker", fmt.Sprintf("--listen=:%d", Port)},
		Ports:     []corev1.ContainerPort{{Name: "http", ContainerPort: Port}},
		Resources: workerResources(run),
	}, false, WorkerGrace)
	mountSecrets(run, &spec)
	spec.Subdomain = ServiceName(run)
	spec.TopologySpreadConstraints = spread(run)
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: WorkerJobName(run), Namespace: run.Namespace, Labels: labels(run, RoleWorker)},
		Spec: batchv1.JobSpec{
			CompletionMode:        ptr.To(batchv1.IndexedCompletion),
			Completions:           ptr.To(n),
			Parallelism:           ptr.To(n),
			BackoffLimit:          ptr.To[int32](0),
			ActiveDeadlineSeconds: ptr.To(int64(RunDeadline(run).Seconds())),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels(run, RoleWorker)},
				Spec:       spec,
			},
		},
	}
}

// CoordinatorJob drives the workers through the workload and writes the
// results ConfigMap. Its arguments carry everything the run declares, so the
// coordinator needs no access to the BenchmarkRun itself.
func CoordinatorJob(run *v1alpha1.BenchmarkRun, defaultImage string, brokers v1alpha1.BrokerEndpoints) (*batchv1.Job, error) {
	wl := run.Spec.Workload
	var volumes []corev1.Volume
	var mounts []corev1.VolumeMount
	if p := run.Spec.Payload; p != nil && workload.ReadsPayloadFile(wl) {
		// The coordinator reads the payload file and sends its bytes to the
		// workers, so only its pod needs the file: the one key is mounted
		// and payloadFile points at it.
		key := PayloadKey(run)
		volumes = append(volumes, corev1.Volume{Name: payloadVolume, VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: p.ConfigMapRef.Name},
				Items:                []corev1.KeyToPath{{Key: key, Path: key}},
			},
		}})
		mounts = append(mounts, corev1.VolumeMount{Name: payloadVolume, MountPath: PayloadDir, ReadOnly: true})
		wl.PayloadFile = path.Join(PayloadDir, key)
	}
	workload, err := json.Marshal(wl)
	if err != nil {
		return nil, err
	}
	drv, err := effectiveDriver(run)
	if err != nil {
		return nil, err
	}
	dur, err := json.Marshal(run.Spec.DurabilityOrDefault())
	if err != nil {
		return nil, err
	}
	args := []string{
		"coordinator",
		"--system=" + string(run.Spec.System),
		fmt.Sprintf("--workers-service=%s.%s.svc", ServiceName(run), run.Namespace),
		fmt.Sprintf("--count=%d", workerCount(run)),
		fmt.Sprintf("--worker-port=%d", Port),
		"--workload-json=" + string(workload),
		"--durability-json=" + string(dur),
		"--run-id=" + RunID(run),
		"--run-name=" + run.Name,
		"--namespace=" + run.Namespace,
		"--results-configmap=" + ResultsName(run),
		"--owner-uid=" + string(run.UID),
		"--deadline=" + CoordinatorDeadline(run).String(),
		// The workers exit when the run is done, so their Job completes.
		"--shutdown-workers",
	}
	if n := run.Spec.RepeatCount(); n > 1 {
		args = append(args, fmt.Sprintf("--repeats=%d", n))
	}
	if d := run.Status.Durability; d != nil && d.BrokerVersion != "" {
		// The results' durability then says, as status does, whether the
		// experiment verified the level on that version.
		args = append(args, "--broker-version="+d.BrokerVersion)
	}
	if run.Spec.Cluster.Existing != nil {
		// streambench configured nothing on these brokers: the
		// coordinator reads what they really do (it reaches them; the
		// controller may not) and reports it with the results.
		args = append(args, "--existing-cluster")
	}
	if len(run.Spec.Faults) > 0 {
		// Each fault's stall is explained by the settings the brokers
		// really run with, which the coordinator reads (it reaches them).
		args = append(args, "--read-failure-settings")
	}
	if drv != nil {
		js, err := json.Marshal(drv)
		if err != nil {
			return nil, err
		}
		args = append(args, "--driver-json="+string(js))
	}
	// The paths of the mounted Secret keys, never their values; the
	// coordinator hands them to the workers in the driver's config, and the
	// workers' pods mount the same keys at the same paths.
	sec, err := clientsecurity.RunResolve(run, SecretPath)
	if err != nil {
		return nil, err
	}
	if sec != nil {
		js, err := json.Marshal(sec)
		if err != nil {
			return nil, err
		}
		args = append(args, "--security-json="+string(js))
	}
	if run.Spec.Testbed != nil && run.Spec.Testbed.DropPageCache {
		// The coordinator asks the operator to drop the page cache again
		// before a backlog is drained (internal/pagecache): the backlog is
		// written after the drop before the load.
		args = append(args, "--drop-page-cache")
	}
	if len(run.Spec.Faults) > 0 {
		// spec.faults count from the measured phase's start, which only
		// the coordinator knows; it writes it where the operator reads it
		// (internal/faults, clock.go).
		args = append(args, "--fault-clock", "--snapshot-interval="+faults.Interval.String())
		if l := faults.LeaderFaults(run.Spec.Faults); l != "" {
			// The coordinator names the leader at each such fault's
			// time (internal/faults, leaders.go).
			args = append(args, "--fault-leaders="+l)
		}
	}
	if tb := run.Status.Testbed; tb != nil {
		// Probed before the workers start; the coordinator keeps it in
		// summary.json, so the results carry the ground they stood on.
		b, err := json.Marshal(tb)
		if err != nil {
			return nil, err
		}
		args = append(args, "--testbed-json="+string(b))
	}
	switch run.Spec.System {
	case v1alpha1.SystemKafka:
		args = append(args, "--bootstrap="+brokers.BootstrapServers)
	case v1alpha1.SystemPulsar:
		args = append(args, "--service-url="+brokers.ServiceURL, "--admin-url="+brokers.AdminURL)
	}
	args = append(args, monitoringArgs(run)...)
	spec := podSpec(run, corev1.Container{
		Name:         "coordinator",
		Image:        image(run, defaultImage),
		Args:         args,
		Ports:        []corev1.ContainerPort{{Name: "http", ContainerPort: Port}},
		VolumeMounts: mounts,
		Resources:    coordinatorResources,
	}, true, CoordinatorGrace)
	spec.Volumes = append(spec.Volumes, volumes...)
	mountSecrets(run, &spec)
	spec.ServiceAccountName = CoordinatorName(run)
	// Beside the fewest workers (spread).
	spec.TopologySpreadConstraints = spread(run)
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: CoordinatorName(run), Namespace: run.Namespace, Labels: labels(run, RoleCoord)},
		Spec: batchv1.JobSpec{
			BackoffLimit:          ptr.To[int32](0),
			ActiveDeadlineSeconds: ptr.To(int64(RunDeadline(run).Seconds())),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels(run, RoleCoord)},
				Spec:       spec,
			},
		},
	}, nil
}

// SecretsDir holds the Secret keys a run's clients read
// (spec.cluster.existing.tls and authentication): SecretPath.
const SecretsDir = "/etc/streambench/secrets"

// SecretPath is where the coordinator and the workers find a Secret's key:
// SecretsDir/<secret>/<key>. Secret names are DNS subdomains and keys
// match [-._a-zA-Z0-9]+, so neither can leave SecretsDir.
func SecretPath(ref v1alpha1.SecretKeyRef) string {
	return path.Join(SecretsDir, ref.Name, ref.Key)
}

// SecretGroup is the group that may read the mounted Secret keys: the
// image's (distroless nonroot, 65532). As the pod's fsGroup it is a
// supplementary group of the container's process whatever user it runs as
// (spec.workers.image may run as another), and the kubelet gives the files
// that group.
const SecretGroup = 65532

// secretMode is the mounted keys' mode: read-only, for the owner (root) and
// SecretGroup only. The kubelet adds the group's read bit to a read-only
// volume's files under an fsGroup anyway; 0400 alone would leave them
// readable by root only, and the containers never run as root.
const secretMode = 0o440

// mountSecrets mounts the keys the run's clients read (clientsecurity.RunRefs), and
// no other key of their Secrets: one read-only volume per Secret whose
// items list only those keys, at SecretPath. A run that reads none is left
// as it was.
func mountSecrets(run *v1alpha1.BenchmarkRun, spec *corev1.PodSpec) {
	// An error here is CoordinatorJob's too (RunResolve), which refuses
	// the run before any Job is made.
	refs, _ := clientsecurity.RunRefs(run)
	if len(refs) == 0 {
		return
	}
	var names []string
	items := map[string][]corev1.KeyToPath{}
	for _, r := range refs {
		if _, ok := items[r.Name]; !ok {
			names = append(names, r.Name)
		}
		items[r.Name] = append(items[r.Name], corev1.KeyToPath{Key: r.Key, Path: r.Key})
	}
	c := &spec.Containers[0]
	for i, name := range names {
		// Volume names are DNS labels; a Secret's name may be longer and
		// hold dots, so the volumes are numbered in the spec's order.
		vol := fmt.Sprintf("secret-%d", i)
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: vol, VolumeSource: corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{SecretName: name, Items: items[name], DefaultMode: ptr.To[int32](secretMode)},
		}})
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: vol, MountPath: path.Join(SecretsDir, name), ReadOnly: true})
	}
	spec.SecurityContext.FSGroup = ptr.To[int64](SecretGroup)
}

// PayloadDir is where the coordinator pod sees spec.payload's ConfigMap.
const PayloadDir = "/etc/streambench/payload"

const payloadVolume = "payload"

// PayloadKey is the key of spec.payload's ConfigMap that holds the payload
// file: spec.payload.configMapRef.key, or the base name of payloadFile,
// which is the key kubectl create configmap --from-file gives a file.
func PayloadKey(run *v1alpha1.BenchmarkRun) string {
	if p := run.Spec.Payload; p != nil && p.ConfigMapRef.Key != "" {
		return p.ConfigMapRef.Key
	}
	return path.Base(run.Spec.Workload.PayloadFile)
}

// effectiveDriver is what the coordinator's clients are configured with:
// status.driver, where the controller put the driver file's settings under
// spec.driver's, or spec.driver itself for a run without a driver file.
func effectiveDriver(run *v1alpha1.BenchmarkRun) (*v1alpha1.DriverSpec, error) {
	if run.Status.Driver != nil {
		return run.Status.Driver, nil
	}
	d := run.Spec.Driver
	if d == nil {
		return nil, nil
	}
	if d.ConfigMapRef != nil {
		// Passing spec.driver on would drop the file's settings silently.
		return nil, errors.New("spec.driver.configMapRef has not been read into status.driver yet; the controller does that in Pending")
	}
	return d, nil
}

// CoordinatorRBAC lets the coordinator's ServiceAccount write only the run's
// results ConfigMap (create needs the verb on the resource type; update and
// get are limited to that one name).
func CoordinatorRBAC(run *v1alpha1.BenchmarkRun) (*corev1.ServiceAccount, *rbacv1.Role, *rbacv1.RoleBinding) {
	name := CoordinatorName(run)
	meta := metav1.ObjectMeta{Name: name, Namespace: run.Namespace, Labels: labels(run, RoleCoord)}
	sa := &corev1.ServiceAccount{ObjectMeta: meta}
	role := &rbacv1.Role{ObjectMeta: meta, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{ResultsName(run)}, Verbs: []string{"get", "update", "patch"}},
	}}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: meta,
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: run.Namespace}},
	}
	return sa, role, binding
}
