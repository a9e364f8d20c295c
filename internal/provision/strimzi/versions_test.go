package strimzi

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

func TestParseKafkaImages(t *testing.T) {
	tests := []struct {
		name    string
		value   string
		want    KafkaVersions
		newest  string
		wantErr []string // substrings of the error, all of them
	}{
		{
			name: "Strimzi 1.2.0's install files",
			value: `4.2.0=quay.io/strimzi/kafka:1.2.0-kafka-4.2.0
4.2.1=quay.io/strimzi/kafka:1.2.0-kafka-4.2.1
4.3.0=quay.io/strimzi/kafka:1.2.0-kafka-4.3.0
4.3.1=quay.io/strimzi/kafka:1.2.0-kafka-4.3.1
`,
			want:   KafkaVersions{"4.2.0", "4.2.1", "4.3.0", "4.3.1"},
			newest: "4.3.1",
		},
		{
			name:   "blank lines, indentation and CRLF",
			value:  "\n  4.2.1=img:b\r\n\n\t4.2.0=img:a  \n   \n",
			want:   KafkaVersions{"4.2.0", "4.2.1"},
			newest: "4.2.1",
		},
		{
			// Strimzi's Util.parseMap splits at commas and blanks too.
			name:   "several entries on one line, as Strimzi reads them",
			value:  "4.2.0=img:a, 4.2.1=img:b 4.3.0=img:c",
			want:   KafkaVersions{"4.2.0", "4.2.1", "4.3.0"},
			newest: "4.3.0",
		},
		{
			// As strings 4.10.0 < 4.9.0 and 10.0.0 < 9.1.0.
			name:   "versions compared by their numbers",
			value:  "4.10.0=a\n4.9.0=b\n10.0.0=c\n9.1.0=d\n4.9.10=e\n4.9.2=f",
			want:   KafkaVersions{"4.9.0", "4.9.2", "4.9.10", "4.10.0", "9.1.0", "10.0.0"},
			newest: "10.0.0",
		},
		{
			name:   "a version listed twice counts once",
			value:  "4.3.1=old\n4.3.1=new\n4.2.0=x",
			want:   KafkaVersions{"4.2.0", "4.3.1"},
			newest: "4.3.1",
		},
		{
			name:    "a line without =",
			value:   "4.2.0=a\nquay.io/strimzi/kafka:1.2.0-kafka-4.3.1",
			wantErr: []string{`STRIMZI_KAFKA_IMAGES line 2: "quay.io/strimzi/kafka:1.2.0-kafka-4.3.1" is not VERSION=IMAGE (e.g. 4.3.1=quay.io/strimzi/kafka:1.2.0-kafka-4.3.1)`},
		},
		{
			name:    "a version without an image",
			value:   "4.2.0=a\n4.3.1=",
			wantErr: []string{`STRIMZI_KAFKA_IMAGES line 2: "4.3.1=" names no image after the =`},
		},
		{
			name:  "versions that are not dotted numbers, every bad line named",
			value: "latest=a\n4.2.0=b\n4=c\n4.x.1=d\n=e",
			wantErr: []string{
				`line 1: "latest" is not a Kafka version (dotted numbers, e.g. 4.3.1)`,
				`line 3: "4" is not a Kafka version`,
				`line 4: "4.x.1" is not a Kafka version`,
				`line 5: "" is not a Kafka version`,
			},
		},
		{
			name:    "nothing listed",
			value:   " \n\n",
			wantErr: []string{"STRIMZI_KAFKA_IMAGES lists no Kafka version"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseKafkaImages(tt.value)
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("ParseKafkaImages = %v, want an error", got)
				}
				for _, want := range tt.wantErr {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q\nwant it to contain %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("versions (-want +got):\n%s", diff)
			}
			if got.Newest() != tt.newest {
				t.Errorf("Newest() = %q, want %q", got.Newest(), tt.newest)
			}
		})
	}
}

func TestCompareKafkaVersions(t *testing.T) {
	tests := []struct {
		a, b string
		want int // its sign
	}{
		{"4.10.0", "4.9.0", 1},
		{"4.9.0", "4.10.0", -1},
		{"4.3.1", "4.3.1", 0},
		{"4.3", "4.3.0", 0},
		{"4.3.0.1", "4.3.0", 1},
		{"latest", "4.3.1", -1},
		{"4.3.1", "latest", 1},
	}
	for _, tt := range tests {
		got := compareKafkaVersions(tt.a, tt.b)
		if sign(got) != tt.want {
			t.Errorf("compareKafkaVersions(%q, %q) = %d, want sign %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

// TestDefaultKafkaVersionIsStrimzis reads the versions out of Strimzi
// 1.2.0's own cluster operator Deployment: DefaultKafkaVersion, assumed
// when no Strimzi is found, is its newest, its default.
func TestDefaultKafkaVersionIsStrimzis(t *testing.T) {
	dep := upstreamOperator(t)
	ops := ClusterOperators([]appsv1.Deployment{dep}, dep.Namespace)
	if len(ops) != 1 || ops[0].Err != nil {
		t.Fatalf("ClusterOperators(Strimzi %s's Deployment) = %+v, want one operator", StrimziVersion, ops)
	}
	if want := (KafkaVersions{"4.2.0", "4.2.1", "4.3.0", "4.3.1"}); !slices.Equal(ops[0].Versions, want) {
		t.Errorf("Strimzi %s supports %v, want %v (update DefaultKafkaVersion's comment)", StrimziVersion, ops[0].Versions, want)
	}
	if ops[0].Versions.Newest() != DefaultKafkaVersion {
		t.Errorf("DefaultKafkaVersion = %s, Strimzi %s's newest (its default) is %s", DefaultKafkaVersion, StrimziVersion, ops[0].Versions.Newest())
	}
	if !ops[0].Watches {
		t.Errorf("the operator of Strimzi's install files watches its own namespace (STRIMZI_NAMESPACE from metadata.namespace)")
	}
}

// upstreamOperator is Strimzi's own cluster operator Deployment
// (testdata/upstream), in namespace "strimzi".
func upstreamOperator(t *testing.T) appsv1.Deployment {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(upstream, "strimzi-"+StrimziVersion, "060-Deployment-strimzi-cluster-operator.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var dep appsv1.Deployment
	if err := yaml.UnmarshalStrict(b, &dep); err != nil {
		t.Fatal(err)
	}
	dep.Namespace = "strimzi"
	return dep
}

// operatorOf is a Deployment namespace/name whose one container has env.
func operatorOf(namespace, name string, env map[string]string) appsv1.Deployment {
	dep := appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	c := corev1Container(env)
	dep.Spec.Template.Spec.Containers = append(dep.Spec.Template.Spec.Containers, c)
	return dep
}

func TestChooseKafkaVersion(t *testing.T) {
	v42 := map[string]string{KafkaImagesEnv: "4.2.0=a\n4.2.1=b", watchedNamespacesEnv: "*"}
	unpinned := newRun()
	pinned := func(v string) *v1alpha1.BenchmarkRun {
		return newRun(func(r *v1alpha1.BenchmarkRun) { r.Spec.Cluster.Managed.Version = v })
	}
	tests := []struct {
		name     string
		run      *v1alpha1.BenchmarkRun
		deps     []appsv1.Deployment
		notFound string
		want     KafkaVersionChoice
		wantErr  string
	}{
		{
			name: "unpinned: the newest the installed Strimzi supports, named in the Kafka",
			run:  unpinned,
			deps: []appsv1.Deployment{operatorOf("strimzi", ClusterOperatorName, v42)},
			want: KafkaVersionChoice{Version: "4.2.1", Named: true, Reason: ReasonNewestSupported,
				Message: "Kafka 4.2.1, the newest that Strimzi in namespace strimzi supports (4.2.0, 4.2.1)"},
		},
		{
			name: "pinned to a supported version",
			run:  pinned("4.2.0"),
			deps: []appsv1.Deployment{operatorOf("strimzi", "my-strimzi", v42)},
			want: KafkaVersionChoice{Version: "4.2.0", Named: true, Reason: ReasonPinned,
				Message: "Kafka 4.2.0 as spec.cluster.managed.version asks, which Strimzi in namespace strimzi (Deployment my-strimzi) supports (4.2.0, 4.2.1)"},
		},
		{
			name: "pinned to a version Strimzi does not deploy",
			run:  pinned("4.3.1"),
			deps: []appsv1.Deployment{operatorOf("strimzi", ClusterOperatorName, v42)},
			want: KafkaVersionChoice{Reason: ReasonUnsupportedVersion},
			wantErr: "spec.cluster.managed.version 4.3.1 is not a Kafka version that Strimzi in namespace strimzi deploys: " +
				"it supports 4.2.0, 4.2.1 (STRIMZI_KAFKA_IMAGES of its cluster operator); " +
				"set spec.cluster.managed.version to one of them, or remove it for the newest (4.2.1)",
		},
		{
			name:     "no Strimzi found, unpinned: DefaultKafkaVersion assumed, the Kafka names none",
			run:      unpinned,
			notFound: "no Deployment in the cluster runs a Strimzi cluster operator",
			want: KafkaVersionChoice{Version: DefaultKafkaVersion, Reason: ReasonOperatorNotFound,
				Message: "Kafka 4.3.1 assumed (the default of Strimzi 1.2.0, whose rules streambench follows): " +
					"no Deployment in the cluster runs a Strimzi cluster operator; the Kafka leaves the version to the installed Strimzi, " +
					"whose default may be another, and status.durability.brokerVersion would then not be the brokers'; set spec.cluster.managed.version to name the version"},
		},
		{
			name:     "no Strimzi found, pinned: taken unchecked",
			run:      pinned("3.9.0"),
			notFound: "the operator's role does not let it list Deployments",
			want: KafkaVersionChoice{Version: "3.9.0", Named: true, Reason: ReasonPinnedNotChecked,
				Message: "Kafka 3.9.0 as spec.cluster.managed.version asks, not checked against the versions Strimzi supports: the operator's role does not let it list Deployments"},
		},
		{
			name: "an unreadable list counts as not found, and says why",
			run:  unpinned,
			deps: []appsv1.Deployment{operatorOf("strimzi", ClusterOperatorName, map[string]string{KafkaImagesEnv: "4.3.1"})},
			want: KafkaVersionChoice{Version: DefaultKafkaVersion, Reason: ReasonOperatorNotFound,
				Message: `Kafka 4.3.1 assumed (the default of Strimzi 1.2.0, whose rules streambench follows): ` +
					`the versions of Strimzi's cluster operator strimzi/strimzi-cluster-operator cannot be read: STRIMZI_KAFKA_IMAGES line 1: "4.3.1" is not VERSION=IMAGE ` +
					`(e.g. 4.3.1=quay.io/strimzi/kafka:1.2.0-kafka-4.3.1); the Kafka leaves the version to the installed Strimzi, ` +
					`whose default may be another, and status.durability.brokerVersion would then not be the brokers'; set spec.cluster.managed.version to name the version`},
		},
		{
			name: "several operators: the one watching the run's namespace, and the message says which and why",
			run:  unpinned,
			deps: []appsv1.Deployment{
				operatorOf("a", ClusterOperatorName, map[string]string{KafkaImagesEnv: "4.3.1=x", watchedNamespacesEnv: "other"}),
				operatorOf("b", "kafka-operator", map[string]string{KafkaImagesEnv: "4.2.0=y", watchedNamespacesEnv: "team, bench"}),
			},
			want: KafkaVersionChoice{Version: "4.2.0", Named: true, Reason: ReasonNewestSupported,
				Message: "Kafka 4.2.0, the newest that Strimzi in namespace b (Deployment kafka-operator) supports (4.2.0); " +
					"of the 2 Strimzi cluster operators (b/kafka-operator, a/strimzi-cluster-operator), b/kafka-operator was read: it is the one that watches namespace bench"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ChooseKafkaVersion(tt.run, ClusterOperators(tt.deps, tt.run.Namespace), tt.notFound)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Errorf("error = %v\nwant    %s", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("choice (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClusterOperatorsOrder(t *testing.T) {
	images := map[string]string{KafkaImagesEnv: "4.3.1=x"}
	own := operatorOf("strimzi", ClusterOperatorName, images)
	own.Spec.Template.Spec.Containers[0].Env = append(own.Spec.Template.Spec.Containers[0].Env, fieldRefEnv(watchedNamespacesEnv, "metadata.namespace"))
	tests := []struct {
		name      string
		deps      []appsv1.Deployment
		namespace string
		want      []string
	}{
		{
			name: "Deployments without the env are not operators",
			deps: []appsv1.Deployment{operatorOf("x", "web", map[string]string{"STRIMZI_NAMESPACE": "*"}), operatorOf("y", "kafka", images)},
			want: []string{"y/kafka"},
		},
		{
			name: "with no watch to tell them apart, the one named strimzi-cluster-operator, then by namespace and name",
			deps: []appsv1.Deployment{operatorOf("c", "b", images), operatorOf("z", ClusterOperatorName, images), operatorOf("a", "c", images), operatorOf("a", "b", images)},
			want: []string{"z/strimzi-cluster-operator", "a/b", "a/c", "c/b"},
		},
		{
			name:      "one that watches its own namespace, the run's, first",
			deps:      []appsv1.Deployment{operatorOf("a", ClusterOperatorName, images), own},
			namespace: "strimzi",
			want:      []string{"strimzi/strimzi-cluster-operator", "a/strimzi-cluster-operator"},
		},
		{
			name:      "one that watches its own namespace, not the run's, is not preferred",
			deps:      []appsv1.Deployment{own, operatorOf("a", ClusterOperatorName, images)},
			namespace: "bench",
			want:      []string{"a/strimzi-cluster-operator", "strimzi/strimzi-cluster-operator"},
		},
		{
			name:      "* watches every namespace",
			deps:      []appsv1.Deployment{operatorOf("a", ClusterOperatorName, images), operatorOf("b", "other", map[string]string{KafkaImagesEnv: "4.3.1=x", watchedNamespacesEnv: "*"})},
			namespace: "bench",
			want:      []string{"b/other", "a/strimzi-cluster-operator"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, o := range ClusterOperators(tt.deps, tt.namespace) {
				got = append(got, o.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("operators (-want +got):\n%s", diff)
			}
		})
	}
}

// TestKafkaNamesTheChosenVersion: the Kafka names the version the
// durability is stated for whenever the controller read it from Strimzi,
// and leaves it to Strimzi otherwise.
func TestKafkaNamesTheChosenVersion(t *testing.T) {
	resolved := func(status metav1.ConditionStatus, version string) func(*v1alpha1.BenchmarkRun) {
		return func(r *v1alpha1.BenchmarkRun) {
			r.Status.Durability = &v1alpha1.EffectiveDurability{BrokerVersion: version}
			r.SetCondition(v1alpha1.ConditionBrokerVersionResolved, status, "x", "y")
		}
	}
	tests := []struct {
		name string
		run  *v1alpha1.BenchmarkRun
		want string
	}{
		{"no status (a suite's host run): Strimzi's default", newRun(), ""},
		{"pinned", newRun(func(r *v1alpha1.BenchmarkRun) { r.Spec.Cluster.Managed.Version = "4.2.0" }), "4.2.0"},
		{"chosen from the installed Strimzi", newRun(resolved(metav1.ConditionTrue, "4.2.1")), "4.2.1"},
		{"assumed, no Strimzi found: left to Strimzi", newRun(resolved(metav1.ConditionUnknown, DefaultKafkaVersion)), ""},
		{"durability without the condition (a run from before): left to Strimzi", newRun(func(r *v1alpha1.BenchmarkRun) {
			r.Status.Durability = &v1alpha1.EffectiveDurability{BrokerVersion: "4.3.1"}
		}), ""},
		{"not Kafka", newRun(func(r *v1alpha1.BenchmarkRun) {
			r.Spec.System = v1alpha1.SystemPulsar
			resolved(metav1.ConditionTrue, "4.0.7")(r)
		}), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := KafkaVersionOf(tt.run); got != tt.want {
				t.Errorf("KafkaVersionOf = %q, want %q", got, tt.want)
			}
			if tt.run.Spec.System != v1alpha1.SystemKafka {
				return
			}
			kafka, err := Kafka(tt.run, translate(t, tt.run))
			if err != nil {
				t.Fatal(err)
			}
			got, _, _ := unstructured.NestedString(kafka.Object, "spec", "kafka", "version")
			if got != tt.want {
				t.Errorf("spec.kafka.version = %q, want %q", got, tt.want)
			}
		})
	}
}

// corev1Container is a container with env, in the order of its names.
func corev1Container(env map[string]string) corev1.Container {
	c := corev1.Container{Name: "operator", Image: "quay.io/strimzi/operator:" + StrimziVersion}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		c.Env = append(c.Env, corev1.EnvVar{Name: k, Value: env[k]})
	}
	return c
}

func fieldRefEnv(name, path string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
}
