package probe

import (
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/javaruntime"
)

// RoleJava is the role of the Job that reads the brokers' Java runtime.
const RoleJava = "java-probe"

// JavaDeadline bounds the Java probe Job (seconds): the image is on the
// node already (a broker pod runs it there), so it is scheduling, a
// container start and one JVM start of about a second.
const JavaDeadline = 120

// JavaJobName is a run's Java probe Job.
func JavaJobName(run *v1alpha1.BenchmarkRun) string { return run.Name + "-java" }

// javaScript runs the java the broker's own start scripts run (Kafka's
// kafka-run-class.sh and Pulsar's bin/pulsar take $JAVA_HOME/bin/java
// when JAVA_HOME is set, else java on PATH) and leaves what it prints in
// the termination message, which the controller reads from the pod's
// status: no pods/exec or pods/log permission. The kubelet keeps the
// message's last 4096 bytes; about 2 KB are printed, and the -version
// lines come last (javaruntime.Parse reads them alone if need be).
var javaScript = `exec "${JAVA_HOME:+$JAVA_HOME/bin/}java" ` + strings.Join(javaruntime.Args, " ") + " 2>" + corev1.TerminationMessagePathDefault

// BrokerContainer is the broker's container of a broker pod: Strimzi
// names it kafka, the Pulsar chart <release>-broker; otherwise the first.
func BrokerContainer(pod *corev1.Pod) (corev1.Container, bool) {
	cs := pod.Spec.Containers
	for _, c := range cs {
		if c.Name == "kafka" || strings.HasSuffix(c.Name, "-broker") {
			return c, true
		}
	}
	if len(cs) == 0 {
		return corev1.Container{}, false
	}
	return cs[0], true
}

// JavaJob reads the Java runtime of a broker pod's image: on the pod's
// node (whose image cache holds it), tolerating what the pod tolerates,
// pulling with its pull secrets, and running as the broker runs (its pod
// and container security contexts, so a namespace's Pod Security level
// that admits the brokers admits the probe). It starts no broker and
// mounts nothing; the service account token is not mounted.
func JavaJob(run *v1alpha1.BenchmarkRun, broker *corev1.Pod) *batchv1.Job {
	c, _ := BrokerContainer(broker)
	var sc *corev1.SecurityContext
	if c.SecurityContext != nil {
		sc = c.SecurityContext.DeepCopy()
	}
	var psc *corev1.PodSecurityContext
	if broker.Spec.SecurityContext != nil {
		psc = broker.Spec.SecurityContext.DeepCopy()
	}
	spec := corev1.PodSpec{
		RestartPolicy:                corev1.RestartPolicyNever,
		Affinity:                     onNode(broker.Spec.NodeName),
		Tolerations:                  append([]corev1.Toleration(nil), broker.Spec.Tolerations...),
		ImagePullSecrets:             append([]corev1.LocalObjectReference(nil), broker.Spec.ImagePullSecrets...),
		SecurityContext:              psc,
		AutomountServiceAccountToken: ptr.To(false),
		EnableServiceLinks:           ptr.To(false),
		Containers: []corev1.Container{{
			Name:            "java",
			Image:           c.Image,
			ImagePullPolicy: corev1.PullIfNotPresent,
			Command:         []string{"/bin/sh", "-c", javaScript},
			// A shell that cannot start java says why in the same file;
			// an image without a shell fails the Job, whose logs then say.
			TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
			SecurityContext:          sc,
		}},
	}
	j := job(run, JavaJobName(run), RoleJava, spec)
	j.Spec.ActiveDeadlineSeconds = ptr.To[int64](JavaDeadline)
	j.Annotations = map[string]string{AnnotationNode: broker.Spec.NodeName, AnnotationBrokerPod: broker.Name}
	return j
}

// AnnotationBrokerPod names the broker pod whose image a Java probe read.
const AnnotationBrokerPod = "streambench.io/broker-pod"
