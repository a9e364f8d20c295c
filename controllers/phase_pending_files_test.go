package controllers

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/provision/workers"
)

// OMB's own files, as ombdriver's and workload's corpus tests read them.
func ombFile(rel string) []byte {
	data, err := os.ReadFile(filepath.Join("..", "internal", rel))
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return data
}

func coordinatorArg(job *batchv1.Job, name string) string {
	for _, a := range job.Spec.Template.Spec.Containers[0].Args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}

// noJobs says the run deployed nothing: a refused run costs nothing.
func noJobs(run *v1alpha1.BenchmarkRun) {
	var jobs batchv1.JobList
	ExpectWithOffset(1, k8sClient.List(ctx, &jobs, client.InNamespace(run.Namespace))).To(Succeed())
	ExpectWithOffset(1, jobs.Items).To(BeEmpty())
}

var _ = Describe("a run that names its files in ConfigMaps", func() {
	var ns string
	BeforeEach(func() { ns = newNamespace() })

	configMap := func(name string, data map[string]string, binary map[string][]byte) {
		Expect(k8sClient.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data, BinaryData: binary,
		})).To(Succeed())
	}

	It("runs OMB's kafka-latency.yaml from a ConfigMap, spec.driver's settings over the file's", func() {
		configMap("kafka-latency", map[string]string{
			"kafka-latency.yaml": string(ombFile("ombdriver/testdata/omb/driver-kafka/kafka-latency.yaml")),
		}, nil)
		run := existingKafkaRun(ns)
		run.Spec.Driver = &v1alpha1.DriverSpec{
			ConfigMapRef: &v1alpha1.ConfigMapFileRef{Name: "kafka-latency"},
			Kafka:        &v1alpha1.KafkaDriver{Producer: map[string]string{"linger.ms": "5"}},
		}
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		running := waitPhase(run, v1alpha1.PhaseRunning)

		d := running.Status.Driver
		Expect(d).NotTo(BeNil())
		Expect(d.ConfigMapRef).To(BeNil())
		Expect(d.Kafka.Producer).To(HaveKeyWithValue("linger.ms", "5"))
		Expect(d.Kafka.Producer).To(HaveKeyWithValue("batch.size", "131072"))
		// acks=all is level 2's own setting: accepted, and left to spec.durability.
		Expect(d.Kafka.Producer).NotTo(HaveKey("acks"))
		Expect(d.Kafka.Consumer).To(HaveKeyWithValue("max.partition.fetch.bytes", "10485760"))

		var sent v1alpha1.DriverSpec
		Expect(json.Unmarshal([]byte(coordinatorArg(getJob(run, workers.CoordinatorName(run)), "driver-json")), &sent)).To(Succeed())
		Expect(sent).To(Equal(*d))
	})

	It("fails at once when the driver file's ConfigMap does not exist, saying how to create it", func() {
		run := existingKafkaRun(ns)
		run.Spec.Driver = &v1alpha1.DriverSpec{ConfigMapRef: &v1alpha1.ConfigMapFileRef{Name: "kafka-latency"}}
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		failed := waitPhase(run, v1alpha1.PhaseFailed)
		Expect(failed.Status.Message).To(ContainSubstring("spec.driver.configMapRef.name: ConfigMap kafka-latency not found in namespace " + ns))
		Expect(failed.Status.Message).To(ContainSubstring("kubectl create configmap kafka-latency -n " + ns + " --from-file="))
		noJobs(run)
	})

	It("fails at once on a durability key in the driver file, pointing at spec.durability", func() {
		// OMB's kafka-sync.yaml flushes every message: level 1's file, not level 2's.
		configMap("kafka-sync", map[string]string{
			"kafka-sync.yaml": string(ombFile("ombdriver/testdata/omb/driver-kafka/kafka-sync.yaml")),
		}, nil)
		run := existingKafkaRun(ns)
		run.Spec.Driver = &v1alpha1.DriverSpec{ConfigMapRef: &v1alpha1.ConfigMapFileRef{Name: "kafka-sync", Key: "kafka-sync.yaml"}}
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		failed := waitPhase(run, v1alpha1.PhaseFailed)
		Expect(failed.Status.Message).To(ContainSubstring("spec.driver.configMapRef: the driver file in ConfigMap kafka-sync, key kafka-sync.yaml"))
		Expect(failed.Status.Message).To(ContainSubstring("flush.messages=1 is set by spec.durability"))
		Expect(failed.Status.Driver).To(BeNil())
		noJobs(run)
	})

	It("refuses a driver file with security keys, pointing at the run's Secret references", func() {
		// An MSK-style driver file: its password is in the file, and its
		// truststore path is the OMB machine's.
		configMap("kafka-sasl", map[string]string{"kafka-sasl.yaml": `name: Kafka
driverClass: io.openmessaging.benchmark.driver.kafka.KafkaBenchmarkDriver
replicationFactor: 3
commonConfig: |
  security.protocol=SASL_SSL
  sasl.mechanism=SCRAM-SHA-512
  sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="bench" password="file-Pw-9c2";
  ssl.truststore.location=/opt/omb/ca.pem
  ssl.truststore.type=PEM
producerConfig: |
  linger.ms=1
`}, nil)
		run := existingKafkaRun(ns)
		run.Spec.Driver = &v1alpha1.DriverSpec{ConfigMapRef: &v1alpha1.ConfigMapFileRef{Name: "kafka-sasl"}}
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		failed := waitPhase(run, v1alpha1.PhaseFailed)
		Expect(failed.Status.Message).To(ContainSubstring("spec.driver.configMapRef: the driver file in ConfigMap kafka-sasl"))
		Expect(failed.Status.Message).To(ContainSubstring("sasl.jaas.config"))
		Expect(failed.Status.Message).To(ContainSubstring("spec.cluster.existing.tls"))
		Expect(failed.Status.Message).NotTo(ContainSubstring("file-Pw-9c2"), "the file's password is not quoted")
		Expect(failed.Status.Driver).To(BeNil())
		noJobs(run)
	})

	It("refuses a payloadFile that has no ConfigMap, saying how to provide one", func() {
		run := existingKafkaRun(ns)
		run.Spec.Workload.PayloadFile = "payload/payload-1Kb.data"
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		failed := waitPhase(run, v1alpha1.PhaseFailed)
		Expect(failed.Status.Message).To(ContainSubstring(`spec.workload.payloadFile "payload/payload-1Kb.data" must reach the coordinator pod`))
		Expect(failed.Status.Message).To(ContainSubstring("kubectl create configmap NAME -n " + ns + " --from-file=payload/payload-1Kb.data"))
		Expect(failed.Status.Message).To(ContainSubstring("set spec.payload.configMapRef.name"))
		Expect(failed.Status.Message).To(ContainSubstring("1 MiB"))
		noJobs(run)
	})

	It("refuses a payload ConfigMap without the file, naming the keys it has", func() {
		configMap("omb-payload", nil, map[string][]byte{"payload-100b.data": ombFile("workload/testdata/omb/payload/payload-100b.data")})
		run := existingKafkaRun(ns)
		run.Spec.Workload.PayloadFile = "payload/payload-1Kb.data"
		run.Spec.Payload = &v1alpha1.PayloadSpec{ConfigMapRef: v1alpha1.ConfigMapFileRef{Name: "omb-payload"}}
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		failed := waitPhase(run, v1alpha1.PhaseFailed)
		Expect(failed.Status.Message).To(ContainSubstring("spec.payload.configMapRef.key (empty: the base name of spec.workload.payloadFile, payload-1Kb.data): ConfigMap omb-payload has no key payload-1Kb.data (its keys: payload-100b.data)"))
		noJobs(run)
	})

	It("mounts OMB's binary payload file from a ConfigMap into the coordinator", func() {
		payload := ombFile("workload/testdata/omb/payload/payload-1Kb.data")
		configMap("omb-payload", nil, map[string][]byte{"payload-1Kb.data": payload})
		run := existingKafkaRun(ns)
		run.Spec.Workload.PayloadFile = "payload/payload-1Kb.data"
		run.Spec.Workload.MessageSize = int32(len(payload))
		run.Spec.Payload = &v1alpha1.PayloadSpec{ConfigMapRef: v1alpha1.ConfigMapFileRef{Name: "omb-payload"}}
		Expect(k8sClient.Create(ctx, run)).To(Succeed())
		waitPhase(run, v1alpha1.PhaseRunning)

		job := getJob(run, workers.CoordinatorName(run))
		pod := job.Spec.Template.Spec
		// Besides the /tmp emptyDir every load pod has (read-only root).
		var payloadVolumes []corev1.Volume
		for _, v := range pod.Volumes {
			if v.EmptyDir == nil {
				payloadVolumes = append(payloadVolumes, v)
			}
		}
		Expect(payloadVolumes).To(HaveLen(1))
		Expect(payloadVolumes[0].ConfigMap.Name).To(Equal("omb-payload"))
		Expect(payloadVolumes[0].ConfigMap.Items).To(Equal([]corev1.KeyToPath{{Key: "payload-1Kb.data", Path: "payload-1Kb.data"}}))
		Expect(pod.Containers[0].VolumeMounts).To(ContainElement(corev1.VolumeMount{Name: payloadVolumes[0].Name, MountPath: workers.PayloadDir, ReadOnly: true}))
		var w v1alpha1.WorkloadSpec
		Expect(json.Unmarshal([]byte(coordinatorArg(job, "workload-json")), &w)).To(Succeed())
		Expect(w.PayloadFile).To(Equal(workers.PayloadDir + "/payload-1Kb.data"))
		Expect(getRun(run).Spec.Workload.PayloadFile).To(Equal("payload/payload-1Kb.data"))
	})
})
