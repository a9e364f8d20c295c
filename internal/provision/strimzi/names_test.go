package strimzi

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

func TestClusterName(t *testing.T) {
	// Hashes are the first 8 hex digits of sha256(run name), e.g.
	// printf 'Run.A' | sha256sum.
	tests := []struct{ run, want string }{
		{"run-a", "run-a"},
		{"run-ack2-async-x7k2p", "run-ack2-async-x7k2p"},
		{"abcdefghij-abcdefghij-abcdefg", "abcdefghij-abcdefgh-a2446b92"},           // 29 > 28
		{"Run.A", "run-a-b42ccc53"},                                                 // upper case, dot
		{"run.ack2", "run-ack2-85a6ef0a"},                                           // a valid run name, not a DNS label
		{"1run", "sb-1run-bfb9c768"},                                                // Services need a leading letter
		{"kafka-level1-1topic-100partitions-abcde", "kafka-level1-1topic-c0b62577"}, // cut, then hashed
		{"kafka-level1-1topic-100partitions-fghij", "kafka-level1-1topic-2e84a28e"}, // same prefix, other cluster
		{"a---------------------------------b", "a-dc257e33"},                       // no '-' before the hash
	}
	for _, tc := range tests {
		run := newRun(func(r *v1alpha1.BenchmarkRun) { r.Name = tc.run })
		got := ClusterName(run)
		if got != tc.want {
			t.Errorf("ClusterName(%q) = %q, want %q", tc.run, got, tc.want)
		}
		if got != ClusterName(run) {
			t.Errorf("ClusterName(%q) is not deterministic", tc.run)
		}
		if len(got) > MaxClusterNameLength {
			t.Errorf("ClusterName(%q) = %q is %d long, more than %d", tc.run, got, len(got), MaxClusterNameLength)
		}
		// The names Strimzi derives must be valid: Service names are
		// DNS-1035 labels, pod names (<cluster>-<pool>-<node id>) are
		// hostnames, i.e. DNS-1123 labels; 99999 is the widest node id
		// the length budget allows.
		pod := got + "-" + PoolName(run) + "-99999"
		if PodSetName(run)+"-99999" != pod {
			t.Errorf("PodSetName(%q) = %q, not the prefix of its pods' names (%s)", tc.run, PodSetName(run), pod)
		}
		for name, errs := range map[string][]string{
			got:                                  validation.IsDNS1035Label(got),
			got + "-kafka-bootstrap":             validation.IsDNS1035Label(got + "-kafka-bootstrap"),
			got + "-kafka-brokers":               validation.IsDNS1035Label(got + "-kafka-brokers"),
			pod:                                  validation.IsDNS1123Label(pod),
			MetricsConfigMapName(run):            validation.IsDNS1123Subdomain(MetricsConfigMapName(run)),
			"label " + got + "-" + PoolName(run): validation.IsValidLabelValue(got + "-" + PoolName(run)),
		} {
			if len(errs) > 0 {
				t.Errorf("run %q: derived name %q is invalid: %s", tc.run, name, strings.Join(errs, "; "))
			}
		}
	}
}

// A broker's pod reads <cluster>-broker-<6 hex digits>-<node id>: the
// run's name once, its role, and a digest that keeps the pools of two runs
// in one namespace apart (KafkaNodePool is namespaced). The digests are of
// the cluster's name, e.g. printf run-a | sha256sum.
func TestPoolName(t *testing.T) {
	tests := []struct{ run, pool, pod string }{
		{"run-a", "broker-66b1eb", "run-a-broker-66b1eb-0"},
		{"run-ack2-async", "broker-" + sha6("run-ack2-async"), "run-ack2-async-broker-" + sha6("run-ack2-async") + "-0"},
		// The cluster's name is cut and hashed first; the pool's digest
		// is of that name.
		{"kafka-level1-1topic-100partitions-abcde", "broker-850157", "kafka-level1-1topic-c0b62577-broker-850157-0"},
	}
	seen := map[string]string{}
	for _, tc := range tests {
		run := newRun(func(r *v1alpha1.BenchmarkRun) { r.Name = tc.run })
		if got := PoolName(run); got != tc.pool {
			t.Errorf("PoolName(%q) = %q, want %q", tc.run, got, tc.pool)
		}
		if got := PodSetName(run) + "-0"; got != tc.pod {
			t.Errorf("the first broker pod of %q is %q, want %q", tc.run, got, tc.pod)
		}
		if other, ok := seen[PoolName(run)]; ok {
			t.Errorf("runs %q and %q share the pool %q", other, tc.run, PoolName(run))
		}
		seen[PoolName(run)] = tc.run
	}
	// Runs whose names differ only after the cluster name's cut still get
	// their own pools, as they get their own clusters.
	a := newRun(func(r *v1alpha1.BenchmarkRun) { r.Name = "kafka-level1-1topic-100partitions-abcde" })
	b := newRun(func(r *v1alpha1.BenchmarkRun) { r.Name = "kafka-level1-1topic-100partitions-fghij" })
	if PoolName(a) == PoolName(b) {
		t.Errorf("runs %q and %q share the pool %q", a.Name, b.Name, PoolName(a))
	}
}

func sha6(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:6]
}

func TestCRDsInstalled(t *testing.T) {
	mapper := func(gvks ...schema.GroupVersionKind) meta.RESTMapper {
		// The versions a version-less look-up prefers, as discovery
		// reports them.
		var preferred []schema.GroupVersion
		for _, gvk := range gvks {
			preferred = append(preferred, gvk.GroupVersion())
		}
		m := meta.NewDefaultRESTMapper(preferred)
		for _, gvk := range gvks {
			m.Add(gvk, meta.RESTScopeNamespace)
		}
		return m
	}
	v1beta2 := schema.GroupVersion{Group: Group, Version: "v1beta2"}
	tests := []struct {
		name   string
		mapper meta.RESTMapper
		want   string // "" means no error
	}{
		{
			name:   "Strimzi 1.x",
			mapper: mapper(KafkaGVK, KafkaNodePoolGVK),
		},
		{
			name:   "no Strimzi",
			mapper: mapper(),
			want:   "Strimzi is not installed: the kafka.strimzi.io/v1 Kafka CRD was not found; install the Strimzi operator 1.x (https://strimzi.io/install/latest, or the strimzi-kafka-operator Helm chart) watching the run's namespace",
		},
		{
			name:   "Kafka without KafkaNodePool",
			mapper: mapper(KafkaGVK),
			want:   "Strimzi is not installed: the kafka.strimzi.io/v1 KafkaNodePool CRD was not found; install the Strimzi operator 1.x (https://strimzi.io/install/latest, or the strimzi-kafka-operator Helm chart) watching the run's namespace",
		},
		{
			name:   "Strimzi 0.x serves v1beta2 only",
			mapper: mapper(v1beta2.WithKind(KindKafka), v1beta2.WithKind(KindKafkaNodePool)),
			want:   "Strimzi is too old: the API server serves Kafka kafka.strimzi.io at v1beta2 only, streambench needs kafka.strimzi.io/v1; upgrade the Strimzi operator to 1.x (https://strimzi.io/install/latest)",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CRDsInstalled(tc.mapper)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("CRDsInstalled: %v", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Errorf("CRDsInstalled = %v\nwant %s", err, tc.want)
			}
		})
	}
}
