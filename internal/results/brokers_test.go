package results

import (
	"reflect"
	"strings"
	"testing"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/stats"
)

// TestManagedBrokers: a managed run's brokers section is what the operator
// probed (the image and its Java), and nothing when it probed neither.
func TestManagedBrokers(t *testing.T) {
	java17 := &v1alpha1.JavaRuntime{Version: "17.0.13+11-LTS", Major: 17, Vendor: "Red Hat, Inc."}
	tests := []struct {
		name string
		sys  v1alpha1.System
		tb   *v1alpha1.Testbed
		want *BrokerSetup
	}{
		{"no testbed", v1alpha1.SystemKafka, nil, nil},
		{"an existing cluster (no topology)", v1alpha1.SystemKafka, &v1alpha1.Testbed{Note: "existing"}, nil},
		{"an operator that did not probe Java", v1alpha1.SystemKafka, &v1alpha1.Testbed{Topology: &v1alpha1.Topology{Brokers: 3}}, nil},
		{"Strimzi Kafka", v1alpha1.SystemKafka,
			&v1alpha1.Testbed{Topology: &v1alpha1.Topology{Brokers: 3, Image: "quay.io/strimzi/kafka:0.47.0-kafka-4.0.0", Java: java17}},
			&BrokerSetup{Where: "Kubernetes pods of Strimzi: 3 Kafka brokers, image quay.io/strimzi/kafka:0.47.0-kafka-4.0.0", Java: java17}},
		{"Pulsar, the probe failed", v1alpha1.SystemPulsar,
			&v1alpha1.Testbed{Topology: &v1alpha1.Topology{Brokers: 2, Bookies: 3, Image: "apachepulsar/pulsar-all:4.0.12"}},
			&BrokerSetup{Where: "Kubernetes pods of the Pulsar chart: 2 brokers, 3 bookies, image apachepulsar/pulsar-all:4.0.12"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ManagedBrokers(tt.sys, tt.tb); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// The brokers' Java goes into summary.json's brokers section.
func TestSummaryStatesTheBrokersJava(t *testing.T) {
	snaps := syntheticRun(1, 1, 1, 1000, []phasePlan{{phase: stats.PhaseMeasure, intervals: 2, acked: 100, publishUs: 2500, e2eUs: 7000}})
	in := testInput(snaps)
	in.Brokers = &BrokerSetup{Where: "local JVMs, 3 Kafka nodes", JVM: []string{"-Xmx512m"},
		Java: &v1alpha1.JavaRuntime{Version: "17.0.15+6-Debian-1deb12u1", Major: 17, Vendor: "Debian", VM: "OpenJDK 64-Bit Server VM"}}
	s, err := Summarize(in)
	if err != nil {
		t.Fatal(err)
	}
	want := `"brokers":{"where":"local JVMs, 3 Kafka nodes","java":{"version":"17.0.15+6-Debian-1deb12u1","major":17,"vendor":"Debian","vm":"OpenJDK 64-Bit Server VM"},"jvm":["-Xmx512m"]}`
	if got := mustJSON(t, s); !strings.Contains(got, want) {
		t.Errorf("summary.json lacks %s", want)
	}
}
