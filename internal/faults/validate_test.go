package faults

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

func dur(d time.Duration) metav1.Duration   { return metav1.Duration{Duration: d} }
func pdur(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }

func pause(target string, at, d time.Duration) v1alpha1.Fault {
	return v1alpha1.Fault{Action: v1alpha1.FaultPause, Target: v1alpha1.FaultTarget(target), At: dur(at), Duration: pdur(d)}
}

func kill(target string, at time.Duration) v1alpha1.Fault {
	return v1alpha1.Fault{Action: v1alpha1.FaultKill, Target: v1alpha1.FaultTarget(target), At: dur(at)}
}

// kafkaSpec is a managed Kafka run of 3 brokers (the CRD's default) with a
// 5-minute measured phase (the workload's default).
func kafkaSpec(faults ...v1alpha1.Fault) *v1alpha1.BenchmarkRunSpec {
	return &v1alpha1.BenchmarkRunSpec{
		System:   v1alpha1.SystemKafka,
		Cluster:  v1alpha1.ClusterSpec{Managed: &v1alpha1.ManagedCluster{}},
		Workload: v1alpha1.WorkloadSpec{MessageSize: 1024, ProducerRate: 1000},
		Faults:   faults,
	}
}

// pulsarSpec is a managed Pulsar run with the default 3 brokers, 3
// bookies and 3 ZooKeeper nodes unless m says otherwise.
func pulsarSpec(m v1alpha1.ManagedCluster, faults ...v1alpha1.Fault) *v1alpha1.BenchmarkRunSpec {
	s := kafkaSpec(faults...)
	s.System, s.Cluster.Managed = v1alpha1.SystemPulsar, &m
	return s
}

func existingSpec(system v1alpha1.System, e v1alpha1.ExistingCluster, faults ...v1alpha1.Fault) *v1alpha1.BenchmarkRunSpec {
	s := kafkaSpec(faults...)
	s.System, s.Cluster = system, v1alpha1.ClusterSpec{Existing: &e}
	return s
}

// want is one expected error: its field path, and words its detail must
// hold (the problem and the fix).
type want struct {
	field string
	words []string
}

func TestValidate(t *testing.T) {
	allow := &v1alpha1.ExistingClusterFaults{AllowDisruption: true}
	cases := []struct {
		name string
		spec *v1alpha1.BenchmarkRunSpec
		want []want
	}{
		{"no faults", kafkaSpec(), nil},
		{"a good Kafka schedule", kafkaSpec(
			pause("broker-1", time.Minute, 30*time.Second),
			kill("controller-2", 2*time.Minute),
			v1alpha1.Fault{Action: v1alpha1.FaultDeletePod, Target: "leader", At: dur(3 * time.Minute)},
		), nil},
		{"a good Pulsar schedule", pulsarSpec(v1alpha1.ManagedCluster{},
			pause("bookie-2", 0, time.Minute),
			kill("zookeeper-0", time.Minute),
			kill("broker-2", 2*time.Minute),
			kill("leader", 4*time.Minute+59*time.Second),
		), nil},
		{"a pause that ends exactly with the phase", kafkaSpec(pause("broker-0", 4*time.Minute, time.Minute)), nil},
		{"at after the measured phase", kafkaSpec(kill("broker-0", 6*time.Minute)),
			[]want{{"spec.faults[0].at", []string{"6m0s", "lasts 5m0s", "testDurationMinutes", "below 5m0s"}}}},
		{"at exactly at the end of the phase", kafkaSpec(kill("broker-0", 5*time.Minute)),
			[]want{{"spec.faults[0].at", []string{"not inside the measured phase"}}}},
		{"at inside a shorter phase", func() *v1alpha1.BenchmarkRunSpec {
			s := kafkaSpec(kill("broker-0", time.Minute))
			s.Workload.TestDurationMinutes = ptr.To(0.5)
			return s
		}(), []want{{"spec.faults[0].at", []string{"lasts 30s"}}}},
		{"a pause that outlasts the phase", kafkaSpec(kill("broker-0", time.Minute), pause("broker-1", 4*time.Minute+30*time.Second, time.Minute)),
			[]want{{"spec.faults[1].duration", []string{"end at 5m30s", "at most 30s"}}}},
		{"a Pause without duration", kafkaSpec(v1alpha1.Fault{Action: v1alpha1.FaultPause, Target: "broker-0", At: dur(time.Minute)}),
			[]want{{"spec.faults[0].duration", []string{"a Pause needs duration", "duration: 30s"}}}},
		{"a Pause of zero", kafkaSpec(pause("broker-0", time.Minute, 0)),
			[]want{{"spec.faults[0].duration", []string{"more than 0"}}}},
		{"a Kill with a duration", kafkaSpec(v1alpha1.Fault{Action: v1alpha1.FaultKill, Target: "broker-0", At: dur(time.Minute), Duration: pdur(time.Second)}),
			[]want{{"spec.faults[0].duration", []string{"Pause only", "remove duration"}}}},
		{"an unknown action", kafkaSpec(v1alpha1.Fault{Action: "Reboot", Target: "broker-0", At: dur(time.Minute)}),
			[]want{{"spec.faults[0].action", []string{"Pause", "Kill", "DeletePod"}}}},
		{"a broker the run does not have", kafkaSpec(kill("broker-0", time.Minute), kill("broker-3", 2*time.Minute)),
			[]want{{"spec.faults[1].target", []string{"no broker-3", "spec.cluster.managed.brokers is 3", "broker-0 to broker-2", "raise spec.cluster.managed.brokers"}}}},
		{"Kafka's controllers are its brokers", kafkaSpec(kill("controller-3", time.Minute)),
			[]want{{"spec.faults[0].target", []string{"controller-0 to controller-2", "every broker is a KRaft controller too"}}}},
		{"one broker", func() *v1alpha1.BenchmarkRunSpec {
			s := kafkaSpec(kill("broker-1", time.Minute))
			s.Cluster.Managed.Brokers = 1
			return s
		}(), []want{{"spec.faults[0].target", []string{"the only broker is broker-0"}}}},
		{"a bookie beyond spec.cluster.managed.bookies", pulsarSpec(v1alpha1.ManagedCluster{Bookies: 4}, kill("bookie-4", time.Minute)),
			[]want{{"spec.faults[0].target", []string{"spec.cluster.managed.bookies is 4", "bookie-0 to bookie-3"}}}},
		{"a ZooKeeper beyond the default 3", pulsarSpec(v1alpha1.ManagedCluster{}, kill("zookeeper-3", time.Minute)),
			[]want{{"spec.faults[0].target", []string{"spec.cluster.managed.metadataStoreReplicas is 3"}}}},
		{"ZooKeeper on Kafka", kafkaSpec(kill("zookeeper-0", time.Minute)),
			[]want{{"spec.faults[0].target", []string{"KRaft", "controller-<n>"}}}},
		{"a bookie on Kafka", kafkaSpec(kill("bookie-0", time.Minute)),
			[]want{{"spec.faults[0].target", []string{"no bookies", "broker-<n>"}}}},
		{"a controller on Pulsar", pulsarSpec(v1alpha1.ManagedCluster{}, kill("controller-0", time.Minute)),
			[]want{{"spec.faults[0].target", []string{"ZooKeeper", "zookeeper-<n>"}}}},
		{"a target that is not one", kafkaSpec(kill("broker-01", time.Minute)),
			[]want{{"spec.faults[0].target", []string{"<role>-<ordinal>", "broker-1"}}}},
		{"a target paused twice at once", kafkaSpec(pause("broker-1", time.Minute, time.Minute), kill("broker-1", 90*time.Second)),
			[]want{{"spec.faults[1].at", []string{"still paused", "spec.faults[0]", "1m0s to 2m0s", "2m0s or later"}}}},
		{"two pauses of one target at the same time: the later in the list", kafkaSpec(pause("broker-1", time.Minute, time.Second), pause("broker-1", time.Minute, time.Second)),
			[]want{{"spec.faults[1].at", []string{"spec.faults[0]"}}}},
		{"a target paused again once the pause ended", kafkaSpec(pause("broker-1", time.Minute, time.Minute), kill("broker-1", 2*time.Minute)), nil},
		{"leader twice at once (resolved at the fault's time)", kafkaSpec(pause("leader", time.Minute, time.Minute), pause("leader", 90*time.Second, time.Second)), nil},
		{"existing without consent", existingSpec(v1alpha1.SystemKafka, v1alpha1.ExistingCluster{BootstrapServers: "k:9092"}, kill("broker-0", time.Minute)),
			[]want{{"spec.faults", []string{"did not deploy", "allowDisruption: true", "or remove spec.faults"}}}},
		{"existing with consent withheld", existingSpec(v1alpha1.SystemKafka, v1alpha1.ExistingCluster{StrimziCluster: &v1alpha1.StrimziClusterRef{Name: "k"}, Faults: &v1alpha1.ExistingClusterFaults{}}, kill("broker-0", time.Minute)),
			[]want{{"spec.faults", []string{"allowDisruption: true"}}}},
		{"existing Strimzi with consent: any ordinal, checked when the fault comes", existingSpec(v1alpha1.SystemKafka, v1alpha1.ExistingCluster{StrimziCluster: &v1alpha1.StrimziClusterRef{Name: "k"}, Faults: allow}, kill("broker-7", time.Minute)), nil},
		{"existing Pulsar with consent but no pods", existingSpec(v1alpha1.SystemPulsar, v1alpha1.ExistingCluster{ServiceURL: "pulsar://p:6650", AdminURL: "http://p:8080", Faults: allow}, kill("bookie-0", time.Minute)),
			[]want{{"spec.cluster.existing.faults.podSelector", []string{"serviceURL", "select the cluster's pods"}}}},
		{"existing Pulsar with consent and pods", existingSpec(v1alpha1.SystemPulsar, v1alpha1.ExistingCluster{ServiceURL: "pulsar://p:6650", AdminURL: "http://p:8080",
			Faults: &v1alpha1.ExistingClusterFaults{AllowDisruption: true, PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "pulsar"}}}}, kill("bookie-0", time.Minute)), nil},
		{"existing: the role is still the system's", existingSpec(v1alpha1.SystemKafka, v1alpha1.ExistingCluster{StrimziCluster: &v1alpha1.StrimziClusterRef{Name: "k"}, Faults: allow}, kill("bookie-0", time.Minute)),
			[]want{{"spec.faults[0].target", []string{"no bookies"}}}},
		{"every problem at once, in order", kafkaSpec(kill("broker-9", 9*time.Minute), v1alpha1.Fault{Action: v1alpha1.FaultPause, Target: "zookeeper-0", At: dur(time.Minute)}),
			[]want{
				{"spec.faults[0].target", []string{"no broker-9"}},
				{"spec.faults[0].at", []string{"9m0s"}},
				{"spec.faults[1].duration", []string{"a Pause needs duration"}},
				{"spec.faults[1].target", []string{"KRaft"}},
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			check(t, Validate(tc.spec, field.NewPath("spec")), tc.want)
		})
	}
}

func TestLocalChecks(t *testing.T) {
	cases := []struct {
		name string
		spec *v1alpha1.BenchmarkRunSpec
		want []want
	}{
		{"no faults on Pulsar", pulsarSpec(v1alpha1.ManagedCluster{}), nil},
		{"Kafka processes paused and killed", kafkaSpec(pause("broker-2", time.Minute, time.Second), kill("controller-0", 2*time.Minute)), nil},
		{"the leader is looked up locally", kafkaSpec(kill("leader", 3*time.Minute), pause("leader", 4*time.Minute, time.Second)), nil},
		{"no pods locally", kafkaSpec(v1alpha1.Fault{Action: v1alpha1.FaultDeletePod, Target: "broker-0", At: dur(time.Minute)}),
			[]want{{"spec.faults[0].action", []string{"processes, not pods", "use Pause or Kill"}}}},
		{"one local KRaft controller", kafkaSpec(kill("controller-0", time.Minute), kill("controller-1", 2*time.Minute)),
			[]want{{"spec.faults[1].target", []string{"one KRaft controller", "target controller-0"}}}},
		// Each bookie is a JVM of its own in a local run with faults.
		{"a Pulsar bookie", pulsarSpec(v1alpha1.ManagedCluster{}, kill("bookie-1", time.Minute)), nil},
		{"Pulsar's broker is the standalone JVM", pulsarSpec(v1alpha1.ManagedCluster{}, kill("bookie-1", time.Minute), kill("broker-0", 2*time.Minute), kill("zookeeper-0", 2*time.Minute)),
			[]want{{"spec.faults[1].target", []string{"one standalone JVM", "target a bookie"}}, {"spec.faults[2].target", []string{"one standalone JVM", "target a bookie"}}}},
		{"an existing cluster's processes", existingSpec(v1alpha1.SystemKafka, v1alpha1.ExistingCluster{BootstrapServers: "localhost:9092",
			Faults: &v1alpha1.ExistingClusterFaults{AllowDisruption: true, PodSelector: &metav1.LabelSelector{}}}, kill("broker-0", time.Minute)),
			[]want{{"spec.faults", []string{"spec.cluster.existing", "spec.cluster.managed"}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			check(t, LocalChecks(tc.spec, field.NewPath("spec")), tc.want)
		})
	}
}

// check holds errs to want, one for one and in order.
func check(t *testing.T, errs field.ErrorList, want []want) {
	t.Helper()
	if len(errs) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%s", len(errs), len(want), lines(errs))
	}
	for i, w := range want {
		e := errs[i]
		if e.Field != w.field {
			t.Errorf("error %d names %s, want %s: %v", i, e.Field, w.field, e)
		}
		for _, word := range w.words {
			if !strings.Contains(e.Error(), word) {
				t.Errorf("error %d lacks %q: %v", i, word, e)
			}
		}
	}
}

func lines(errs field.ErrorList) string {
	var b strings.Builder
	for _, e := range errs {
		b.WriteString("  " + e.Error() + "\n")
	}
	return b.String()
}

func TestTopologyOf(t *testing.T) {
	cases := []struct {
		name  string
		spec  *v1alpha1.BenchmarkRunSpec
		want  Topology
		known bool
	}{
		{"Kafka: every broker a controller", func() *v1alpha1.BenchmarkRunSpec {
			s := kafkaSpec()
			s.Cluster.Managed.Brokers = 5
			return s
		}(), Topology{v1alpha1.RoleBroker: 5, v1alpha1.RoleController: 5}, true},
		{"Kafka defaults", kafkaSpec(), Topology{v1alpha1.RoleBroker: 3, v1alpha1.RoleController: 3}, true},
		{"Pulsar defaults", pulsarSpec(v1alpha1.ManagedCluster{}), Topology{v1alpha1.RoleBroker: 3, v1alpha1.RoleBookie: 3, v1alpha1.RoleZooKeeper: 3}, true},
		{"Pulsar as set", pulsarSpec(v1alpha1.ManagedCluster{Brokers: 1, Bookies: 4, MetadataStoreReplicas: 1}),
			Topology{v1alpha1.RoleBroker: 1, v1alpha1.RoleBookie: 4, v1alpha1.RoleZooKeeper: 1}, true},
		{"existing: not known", existingSpec(v1alpha1.SystemKafka, v1alpha1.ExistingCluster{BootstrapServers: "k:9092"}), nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, known := TopologyOf(tc.spec)
			if known != tc.known || len(got) != len(tc.want) {
				t.Fatalf("got %v %v, want %v %v", got, known, tc.want, tc.known)
			}
			for r, n := range tc.want {
				if got[r] != n {
					t.Errorf("%s: got %d, want %d", r, got[r], n)
				}
			}
		})
	}
}
