package clientsecurity

import (
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/admission"
	"github.com/streambench/streambench-operator/internal/security"
)

// asExisting is the run of a suite's cell against host's brokers: existing
// mode at host's addresses (secured ones when host is), with ExistingFor's
// tls and authentication.
func asExisting(t *testing.T, host *v1alpha1.BenchmarkRun) *v1alpha1.BenchmarkRun {
	t.Helper()
	tls, auth, err := ExistingFor(host)
	if err != nil {
		t.Fatalf("ExistingFor: %v", err)
	}
	e := &v1alpha1.ExistingCluster{TLS: tls, Authentication: auth}
	switch host.Spec.System {
	case v1alpha1.SystemKafka:
		e.BootstrapServers = host.Name + "-kafka-bootstrap.bench.svc:9093"
	default:
		e.ServiceURL, e.AdminURL = "pulsar://p:6650", "http://p:8080"
		if tls != nil {
			e.ServiceURL, e.AdminURL = "pulsar+ssl://p:6651", "https://p:8443"
		}
	}
	l := v1alpha1.Level2
	return &v1alpha1.BenchmarkRun{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "BenchmarkRun"},
		ObjectMeta: metav1.ObjectMeta{Name: host.Name + "-l2-lat", Namespace: host.Namespace},
		Spec: v1alpha1.BenchmarkRunSpec{
			System: host.Spec.System, Cluster: v1alpha1.ClusterSpec{Existing: e},
			Durability: &v1alpha1.DurabilitySpec{Level: &l},
			Workload:   v1alpha1.WorkloadSpec{Name: "lat", MessageSize: 1024, ProducerRate: 1000},
		},
	}
}

// A cell of a suite runs in existing mode against brokers its suite
// deployed from a host run: its clients must read exactly what the host
// run's own clients would (the same Secret keys mounted, the same files
// given to the driver), or the cell measures something else or cannot
// connect.
func TestExistingForReadsWhatTheManagedRunReads(t *testing.T) {
	kafka := func(sec *v1alpha1.ManagedSecurity) *v1alpha1.BenchmarkRun {
		return &v1alpha1.BenchmarkRun{
			ObjectMeta: metav1.ObjectMeta{Name: "s-kafka-tls-scram", Namespace: "bench"},
			Spec: v1alpha1.BenchmarkRunSpec{System: v1alpha1.SystemKafka,
				Cluster: v1alpha1.ClusterSpec{Managed: &v1alpha1.ManagedCluster{Brokers: 3, Security: sec}}},
		}
	}
	pulsar := func(sec *v1alpha1.ManagedSecurity) *v1alpha1.BenchmarkRun {
		return managedPulsarRun("s-pulsar-tls-token", sec)
	}
	tests := []struct {
		name     string
		host     *v1alpha1.BenchmarkRun
		wantRefs int
	}{
		{"Kafka plaintext", kafka(nil), 0},
		{"Kafka plaintext, said", kafka(&v1alpha1.ManagedSecurity{}), 0},
		{"Kafka TLS", kafka(&v1alpha1.ManagedSecurity{TLS: true}), 1},
		{"Kafka SASL_PLAINTEXT SCRAM", kafka(&v1alpha1.ManagedSecurity{Authentication: v1alpha1.ManagedAuthScramSHA512}), 1},
		{"Kafka SASL_SSL SCRAM", kafka(&v1alpha1.ManagedSecurity{TLS: true, Authentication: v1alpha1.ManagedAuthScramSHA512}), 2},
		{"Kafka mutual TLS", kafka(&v1alpha1.ManagedSecurity{TLS: true, Authentication: v1alpha1.ManagedAuthTLS}), 3},
		{"Pulsar plaintext", pulsar(nil), 0},
		{"Pulsar TLS", pulsar(&v1alpha1.ManagedSecurity{TLS: true}), 1},
		{"Pulsar token", pulsar(&v1alpha1.ManagedSecurity{Authentication: v1alpha1.ManagedAuthToken}), 1},
		{"Pulsar TLS and token", pulsar(&v1alpha1.ManagedSecurity{TLS: true, Authentication: v1alpha1.ManagedAuthToken}), 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			child := asExisting(t, tt.host)
			hostRefs, err := RunRefs(tt.host)
			if err != nil {
				t.Fatal(err)
			}
			childRefs, err := RunRefs(child)
			if err != nil {
				t.Fatal(err)
			}
			keys := func(refs []security.Ref) []v1alpha1.SecretKeyRef {
				var out []v1alpha1.SecretKeyRef
				for _, r := range refs {
					out = append(out, r.SecretKeyRef)
				}
				return out
			}
			if !reflect.DeepEqual(keys(childRefs), keys(hostRefs)) {
				t.Errorf("the cell mounts %v, the host run %v", keys(childRefs), keys(hostRefs))
			}
			if len(hostRefs) != tt.wantRefs {
				t.Errorf("%d Secret keys, want %d", len(hostRefs), tt.wantRefs)
			}
			hostSec, err := RunResolve(tt.host, path)
			if err != nil {
				t.Fatal(err)
			}
			childSec, err := RunResolve(child, path)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(childSec, hostSec) {
				t.Errorf("the cell's driver gets %+v, the host run's %+v", childSec, hostSec)
			}
			// The cell must get past the API server: the rules of
			// spec.cluster.existing (a mechanism of its system, mutual TLS
			// with a CA, pulsar+ssl:// with TLS).
			if errs := admission.CreateTyped(admission.BenchmarkRun(), child); len(errs) > 0 {
				t.Errorf("the cell's run is refused: %v", errs)
			}
		})
	}
}

func TestExistingForRefusesWhatTheManagedRunRefuses(t *testing.T) {
	run := managedPulsarRun("r", &v1alpha1.ManagedSecurity{TLS: true, Authentication: v1alpha1.ManagedAuthScramSHA512})
	if _, _, err := ExistingFor(run); err == nil || !strings.Contains(err.Error(), "a managed Pulsar takes token") {
		t.Errorf("err = %v, want the managed run's refusal", err)
	}
}
