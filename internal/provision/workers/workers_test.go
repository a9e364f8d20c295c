package workers

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/protocol"
	"github.com/streambench/streambench-operator/internal/workload"
)

func run(system v1alpha1.System) *v1alpha1.BenchmarkRun {
	test, warm := 2.0, 0.5
	return &v1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "r1", Namespace: "bench", UID: "0123abcd-4567-89ef-0123-456789abcdef"},
		Spec: v1alpha1.BenchmarkRunSpec{
			System:   system,
			Workload: v1alpha1.WorkloadSpec{MessageSize: 100, ProducerRate: 500, TestDurationMinutes: &test, WarmupDurationMinutes: &warm},
			Workers: v1alpha1.WorkersSpec{Count: 4, Placement: v1alpha1.Placement{
				NodeSelector: map[string]string{"node-pool": "clients"},
				Tolerations:  []corev1.Toleration{{Key: "dedicated", Value: "clients", Effect: corev1.TaintEffectNoSchedule}},
			}},
		},
	}
}

func args(job *batchv1.Job) map[string]string {
	m := map[string]string{}
	for _, a := range job.Spec.Template.Spec.Containers[0].Args[1:] {
		k, v, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		m[k] = v
	}
	return m
}

// The Jobs' deadline is the workload's (workload.RunDeadline, tested
// there): spec.timeouts.run when set.
func TestJobsDeadline(t *testing.T) {
	r := run(v1alpha1.SystemKafka)
	job := WorkerJob(r, "img")
	if got, want := *job.Spec.ActiveDeadlineSeconds, int64(workload.Estimate(r.Spec.Workload).Seconds()); got != want {
		t.Errorf("derived deadline = %ds, want the workload's estimate %ds", got, want)
	}
	r.Spec.Timeouts.Run = &metav1.Duration{Duration: 3 * time.Minute}
	if got := *WorkerJob(r, "img").Spec.ActiveDeadlineSeconds; got != 180 {
		t.Errorf("explicit deadline = %ds, want 180 (spec.timeouts.run)", got)
	}
	// spec.timeouts.run bounds each repeat: the Jobs run them all, and
	// the coordinator is told how many.
	r.Spec.Repeats = 3
	job, err := CoordinatorJob(r, "img", v1alpha1.BrokerEndpoints{BootstrapServers: "k:9092"})
	if err != nil {
		t.Fatal(err)
	}
	if got := *job.Spec.ActiveDeadlineSeconds; got != 540 {
		t.Errorf("deadline of 3 repeats = %ds, want 540", got)
	}
	if got := *WorkerJob(r, "img").Spec.ActiveDeadlineSeconds; got != 540 {
		t.Errorf("workers' deadline of 3 repeats = %ds, want 540", got)
	}
	if a := args(job); a["repeats"] != "3" || a["deadline"] != (540*time.Second-CoordinatorGrace).String() {
		t.Errorf("coordinator args: repeats %q, deadline %q", a["repeats"], a["deadline"])
	}
	r.Spec.Repeats = 1
	if job, _ := CoordinatorJob(r, "img", v1alpha1.BrokerEndpoints{BootstrapServers: "k:9092"}); args(job)["repeats"] != "" {
		t.Errorf("a run not repeated passes --repeats=%s", args(job)["repeats"])
	}
}

func TestWorkerJob(t *testing.T) {
	r := run(v1alpha1.SystemKafka)
	job := WorkerJob(r, "img:default")
	if *job.Spec.Completions != 4 || *job.Spec.Parallelism != 4 || *job.Spec.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("want an Indexed Job of 4, got completions %d parallelism %d mode %s",
			*job.Spec.Completions, *job.Spec.Parallelism, *job.Spec.CompletionMode)
	}
	if *job.Spec.BackoffLimit != 0 {
		t.Errorf("a failed worker must fail the run, not be retried: backoffLimit %d", *job.Spec.BackoffLimit)
	}
	pod := job.Spec.Template.Spec
	if pod.Subdomain != "r1-workers" || pod.NodeSelector["node-pool"] != "clients" || len(pod.Tolerations) != 1 {
		t.Errorf("placement or subdomain not applied: %+v", pod)
	}
	if got := pod.Containers[0].Image; got != "img:default" {
		t.Errorf("image = %q", got)
	}
	if job.Spec.Template.Labels[LabelRun] != "r1" || Service(r).Spec.Selector[LabelRole] != RoleWorker {
		t.Error("the headless Service must select the worker pods")
	}
	r.Spec.Workers.Image = "img:override"
	if got := WorkerJob(r, "img:default").Spec.Template.Spec.Containers[0].Image; got != "img:override" {
		t.Errorf("spec.workers.image must override the manager's image, got %q", got)
	}
}

func TestCoordinatorJob(t *testing.T) {
	cases := []struct {
		name    string
		system  v1alpha1.System
		brokers v1alpha1.BrokerEndpoints
		want    map[string]string
		absent  []string
	}{
		{"kafka", v1alpha1.SystemKafka, v1alpha1.BrokerEndpoints{BootstrapServers: "k:9092"},
			map[string]string{"system": "kafka", "bootstrap": "k:9092"}, []string{"service-url", "admin-url"}},
		{"pulsar", v1alpha1.SystemPulsar, v1alpha1.BrokerEndpoints{ServiceURL: "pulsar://p:6650", AdminURL: "http://p:8080"},
			map[string]string{"system": "pulsar", "service-url": "pulsar://p:6650", "admin-url": "http://p:8080"}, []string{"bootstrap"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(c.system)
			job, err := CoordinatorJob(r, "img", c.brokers)
			if err != nil {
				t.Fatal(err)
			}
			got := args(job)
			want := map[string]string{
				"workers-service":   "r1-workers.bench.svc",
				"count":             "4",
				"worker-port":       "8080",
				"run-id":            "0123abcd4567",
				"run-name":          "r1",
				"namespace":         "bench",
				"results-configmap": "r1-results",
				"owner-uid":         string(r.UID),
				"durability-json":   `{"level":2}`,
			}
			if _, ok := got["broker-version"]; ok {
				t.Error("--broker-version set before status.durability knows the version")
			}
			r.Status.Durability = &v1alpha1.EffectiveDurability{BrokerVersion: "4.0.7"}
			if v := args(mustCoordinatorJob(t, r, c.brokers))["broker-version"]; v != "4.0.7" {
				t.Errorf("--broker-version = %q, want status.durability's 4.0.7: the results would call a verified level not verified", v)
			}
			if _, ok := got["shutdown-workers"]; !ok {
				t.Error("--shutdown-workers missing: the worker Job would never complete")
			}
			// Managed brokers carry the translated settings; only an
			// existing cluster is read by the coordinator.
			if _, ok := got["existing-cluster"]; ok {
				t.Error("--existing-cluster set for managed brokers")
			}
			r.Spec.Cluster = v1alpha1.ClusterSpec{Existing: &v1alpha1.ExistingCluster{BootstrapServers: "k:9092"}}
			existing, err := CoordinatorJob(r, "img", c.brokers)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := args(existing)["existing-cluster"]; !ok {
				t.Error("--existing-cluster missing for an existing cluster: its durability would be assumed, not read")
			}
			for k, v := range c.want {
				want[k] = v
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("--%s = %q, want %q", k, got[k], v)
				}
			}
			for _, k := range c.absent {
				if _, ok := got[k]; ok {
					t.Errorf("--%s must not be set for %s", k, c.system)
				}
			}
			var w v1alpha1.WorkloadSpec
			if err := json.Unmarshal([]byte(got["workload-json"]), &w); err != nil || w.ProducerRate != 500 || w.MessageSize != 100 {
				t.Errorf("--workload-json does not carry the workload: %v %+v", err, w)
			}
			if job.Spec.Template.Spec.ServiceAccountName != "r1-coordinator" {
				t.Errorf("the coordinator needs its own ServiceAccount to write results")
			}
		})
	}
}

func TestCoordinatorRBACOnlyTheResultsConfigMap(t *testing.T) {
	sa, role, rb := CoordinatorRBAC(run(v1alpha1.SystemKafka))
	if rb.Subjects[0].Name != sa.Name || rb.RoleRef.Name != role.Name {
		t.Fatal("binding does not tie the ServiceAccount to the Role")
	}
	for _, rule := range role.Rules {
		for _, v := range rule.Verbs {
			if v != "create" && (len(rule.ResourceNames) != 1 || rule.ResourceNames[0] != "r1-results") {
				t.Errorf("verb %q is not limited to the results ConfigMap: %+v", v, rule)
			}
		}
	}
}

// A failed run's status.message comes from the failed container's
// termination message; with the logs as fallback it carries the error the
// coordinator or worker printed (e.g. brokers that do not answer).
func TestContainersReportTheirLogsOnError(t *testing.T) {
	r := run(v1alpha1.SystemKafka)
	coord, err := CoordinatorJob(r, "img", v1alpha1.BrokerEndpoints{BootstrapServers: "k:9092"})
	if err != nil {
		t.Fatal(err)
	}
	for _, job := range []*batchv1.Job{WorkerJob(r, "img"), coord} {
		c := job.Spec.Template.Spec.Containers[0]
		if c.TerminationMessagePolicy != corev1.TerminationMessageFallbackToLogsOnError {
			t.Errorf("Job %s: terminationMessagePolicy %q, want FallbackToLogsOnError", job.Name, c.TerminationMessagePolicy)
		}
		// The command writes its error where the kubelet reads the
		// termination message.
		path := c.TerminationMessagePath
		if path == "" {
			path = corev1.TerminationMessagePathDefault
		}
		if !slices.Contains(c.Env, corev1.EnvVar{Name: protocol.TerminationLogEnv, Value: path}) {
			t.Errorf("Job %s: env %+v, want %s=%s", job.Name, c.Env, protocol.TerminationLogEnv, path)
		}
	}
}

// The payload file reaches the coordinator (which sends its bytes to the
// workers) as one key of spec.payload's ConfigMap, mounted read-only, and
// payloadFile is rewritten to where the pod sees it.
func TestCoordinatorJobMountsThePayloadConfigMap(t *testing.T) {
	cases := []struct {
		name        string
		payloadFile string
		ref         *v1alpha1.ConfigMapFileRef
		wantKey     string // "" means no volume and payloadFile as written
		wantPayload string
	}{
		{"no payload file", "", nil, "", ""},
		{"payload file without a ConfigMap is left as written (Pending refuses such a run)",
			"payload/payload-1Kb.data", nil, "", "payload/payload-1Kb.data"},
		{"key defaults to the file's base name, as kubectl create configmap --from-file names it",
			"payload/payload-1Kb.data", &v1alpha1.ConfigMapFileRef{Name: "omb-payload"},
			"payload-1Kb.data", PayloadDir + "/payload-1Kb.data"},
		{"an explicit key", "payload/payload-1Kb.data", &v1alpha1.ConfigMapFileRef{Name: "omb-payload", Key: "one-kb"},
			"one-kb", PayloadDir + "/one-kb"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(v1alpha1.SystemKafka)
			r.Spec.Workload.PayloadFile = c.payloadFile
			if c.ref != nil {
				r.Spec.Payload = &v1alpha1.PayloadSpec{ConfigMapRef: *c.ref}
			}
			job, err := CoordinatorJob(r, "img", v1alpha1.BrokerEndpoints{BootstrapServers: "k:9092"})
			if err != nil {
				t.Fatal(err)
			}
			pod := job.Spec.Template.Spec
			// The /tmp emptyDir of every pod (read-only root) aside.
			pod.Volumes, pod.Containers[0].VolumeMounts = withoutTmp(pod.Volumes, pod.Containers[0].VolumeMounts)
			var w v1alpha1.WorkloadSpec
			if err := json.Unmarshal([]byte(args(job)["workload-json"]), &w); err != nil {
				t.Fatal(err)
			}
			if w.PayloadFile != c.wantPayload {
				t.Errorf("payloadFile sent to the coordinator = %q, want %q", w.PayloadFile, c.wantPayload)
			}
			if r.Spec.Workload.PayloadFile != c.payloadFile {
				t.Errorf("the builder changed the run's spec.workload.payloadFile to %q", r.Spec.Workload.PayloadFile)
			}
			if c.wantKey == "" {
				if len(pod.Volumes) != 0 || len(pod.Containers[0].VolumeMounts) != 0 {
					t.Errorf("volumes %v, mounts %v: want none", pod.Volumes, pod.Containers[0].VolumeMounts)
				}
				return
			}
			if len(pod.Volumes) != 1 || pod.Volumes[0].ConfigMap == nil {
				t.Fatalf("volumes = %+v, want one ConfigMap volume", pod.Volumes)
			}
			cm := pod.Volumes[0].ConfigMap
			wantItems := []corev1.KeyToPath{{Key: c.wantKey, Path: c.wantKey}}
			if cm.Name != c.ref.Name || len(cm.Items) != 1 || cm.Items[0] != wantItems[0] {
				t.Errorf("ConfigMap volume = %s %+v, want %s %+v", cm.Name, cm.Items, c.ref.Name, wantItems)
			}
			m := pod.Containers[0].VolumeMounts
			if len(m) != 1 || m[0].Name != pod.Volumes[0].Name || m[0].MountPath != PayloadDir || !m[0].ReadOnly {
				t.Errorf("mounts = %+v, want %s read-only at %s", m, pod.Volumes[0].Name, PayloadDir)
			}
		})
	}
}

// The worker pods get no payload volume: the coordinator sends the bytes.
func TestWorkerJobMountsNoPayload(t *testing.T) {
	r := run(v1alpha1.SystemKafka)
	r.Spec.Workload.PayloadFile = "payload/payload-1Kb.data"
	r.Spec.Payload = &v1alpha1.PayloadSpec{ConfigMapRef: v1alpha1.ConfigMapFileRef{Name: "omb-payload"}}
	if v, _ := withoutTmp(WorkerJob(r, "img").Spec.Template.Spec.Volumes, nil); len(v) != 0 {
		t.Errorf("worker volumes = %+v, want none but /tmp", v)
	}
}

func withoutTmp(vs []corev1.Volume, ms []corev1.VolumeMount) ([]corev1.Volume, []corev1.VolumeMount) {
	var v []corev1.Volume
	for _, x := range vs {
		if x.Name != tmpVolume {
			v = append(v, x)
		}
	}
	var m []corev1.VolumeMount
	for _, x := range ms {
		if x.Name != tmpVolume {
			m = append(m, x)
		}
	}
	return v, m
}

// Worker and coordinator pods meet the Pod Security Standard "restricted"
// and carry the run's token; only the coordinator, which writes the
// results ConfigMap, gets a ServiceAccount token.
func TestPodsRestricted(t *testing.T) {
	r := run(v1alpha1.SystemKafka)
	coord, err := CoordinatorJob(r, "img", v1alpha1.BrokerEndpoints{BootstrapServers: "k:9092"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		job       *batchv1.Job
		apiAccess bool
	}{{WorkerJob(r, "img"), false}, {coord, true}} {
		pod := tc.job.Spec.Template.Spec
		if sc := pod.SecurityContext; sc == nil || sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
			t.Errorf("%s: pod security context %+v, want RuntimeDefault seccomp and non-root", tc.job.Name, sc)
		}
		c := pod.Containers[0]
		if sc := c.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
			sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
			t.Errorf("%s: container security context %+v, want read-only root, no escalation, ALL dropped", tc.job.Name, sc)
		}
		if a := pod.AutomountServiceAccountToken; a == nil || *a != tc.apiAccess {
			t.Errorf("%s: automountServiceAccountToken %v, want %v", tc.job.Name, a, tc.apiAccess)
		}
		if _, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok {
			t.Errorf("%s: no memory limit", tc.job.Name)
		}
		var token *corev1.EnvVar
		for i := range c.Env {
			if c.Env[i].Name == "STREAMBENCH_RUN_TOKEN" {
				token = &c.Env[i]
			}
		}
		if token == nil || token.ValueFrom == nil || token.ValueFrom.SecretKeyRef == nil || token.ValueFrom.SecretKeyRef.Name != TokenName(r) {
			t.Errorf("%s: env %+v, want the token from Secret %s", tc.job.Name, c.Env, TokenName(r))
		}
	}
	if g := *coord.Spec.Template.Spec.TerminationGracePeriodSeconds; g < 240 {
		t.Errorf("coordinator grace %ds: it must cover the cleanup (3 min) and the final write (1 min)", g)
	}
}

func TestCoordinatorJobDriverSettings(t *testing.T) {
	spec := &v1alpha1.DriverSpec{Kafka: &v1alpha1.KafkaDriver{Producer: map[string]string{"linger.ms": "5"}}}
	fromFile := &v1alpha1.DriverSpec{Kafka: &v1alpha1.KafkaDriver{Producer: map[string]string{"linger.ms": "5", "batch.size": "1048576"}}}
	withRef := &v1alpha1.DriverSpec{ConfigMapRef: &v1alpha1.ConfigMapFileRef{Name: "kafka-latency"}}
	cases := []struct {
		name    string
		spec    *v1alpha1.DriverSpec
		status  *v1alpha1.DriverSpec
		want    string // --driver-json; "" means absent
		wantErr string
	}{
		{"none", nil, nil, "", ""},
		{"spec.driver as written, for runs from before status.driver", spec, nil, `{"kafka":{"producer":{"linger.ms":"5"}}}`, ""},
		{"status.driver, which holds the driver file's settings", withRef, fromFile,
			`{"kafka":{"producer":{"batch.size":"1048576","linger.ms":"5"}}}`, ""},
		{"a driver file not read yet is an error, not a silent drop", withRef, nil, "", "spec.driver.configMapRef has not been read"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(v1alpha1.SystemKafka)
			r.Spec.Driver, r.Status.Driver = c.spec, c.status
			job, err := CoordinatorJob(r, "img", v1alpha1.BrokerEndpoints{BootstrapServers: "k:9092"})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, ok := args(job)["driver-json"]
			if c.want == "" && ok {
				t.Errorf("--driver-json=%s, want none", got)
			}
			if c.want != "" && got != c.want {
				t.Errorf("--driver-json=%s, want %s", got, c.want)
			}
		})
	}
}

// The coordinator asks for the mid-run page-cache drop only when the run
// asked for drops: otherwise it would wait for an answer nobody gives.
func TestCoordinatorJobDropPageCacheFlag(t *testing.T) {
	for _, drop := range []bool{false, true} {
		r := run(v1alpha1.SystemKafka)
		r.Spec.Testbed = &v1alpha1.TestbedSpec{DropPageCache: drop}
		job, err := CoordinatorJob(r, "img", v1alpha1.BrokerEndpoints{BootstrapServers: "k:9092"})
		if err != nil {
			t.Fatal(err)
		}
		if _, got := args(job)["drop-page-cache"]; got != drop {
			t.Errorf("dropPageCache %v: --drop-page-cache given = %v", drop, got)
		}
	}
}

// The coordinator records the measured phase's start for the operator
// only when the run has faults to schedule from it.
func TestCoordinatorJobFaultClockFlag(t *testing.T) {
	for _, n := range []int{0, 1} {
		r := run(v1alpha1.SystemKafka)
		for range n {
			r.Spec.Faults = append(r.Spec.Faults, v1alpha1.Fault{Action: v1alpha1.FaultDeletePod, Target: "broker-0", At: metav1.Duration{Duration: 10 * time.Second}})
		}
		job, err := CoordinatorJob(r, "img", v1alpha1.BrokerEndpoints{BootstrapServers: "k:9092"})
		if err != nil {
			t.Fatal(err)
		}
		a := args(job)
		if _, got := a["fault-clock"]; got != (n > 0) {
			t.Errorf("%d faults: --fault-clock given = %v", n, got)
		}
		// The fault figures' resolution (faults.Interval); OMB's 10 s
		// default otherwise.
		if got, want := a["snapshot-interval"], map[bool]string{true: "2s", false: ""}[n > 0]; got != want {
			t.Errorf("%d faults: --snapshot-interval %q, want %q", n, got, want)
		}
	}
}

// Faults on leader are named to the coordinator, which looks the leader
// up at their time.
func TestCoordinatorJobFaultLeadersFlag(t *testing.T) {
	r := run(v1alpha1.SystemKafka)
	r.Spec.Faults = []v1alpha1.Fault{
		{Action: v1alpha1.FaultDeletePod, Target: "broker-0", At: metav1.Duration{Duration: 10 * time.Second}},
		{Action: v1alpha1.FaultKill, Target: "leader", At: metav1.Duration{Duration: 40 * time.Second}},
	}
	job, err := CoordinatorJob(r, "img", v1alpha1.BrokerEndpoints{BootstrapServers: "k:9092"})
	if err != nil {
		t.Fatal(err)
	}
	if got := args(job)["fault-leaders"]; got != "1@40s" {
		t.Errorf("--fault-leaders %q, want 1@40s", got)
	}
}

func mustCoordinatorJob(t *testing.T, r *v1alpha1.BenchmarkRun, brokers v1alpha1.BrokerEndpoints) *batchv1.Job {
	t.Helper()
	job, err := CoordinatorJob(r, "img", brokers)
	if err != nil {
		t.Fatal(err)
	}
	return job
}
