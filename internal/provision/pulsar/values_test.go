package pulsar

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/durability"
)

// newRun is a managed Pulsar run "run-a" in namespace "bench" as the API
// server stores it after defaulting (3 brokers, level 2), changed by the
// given functions.
func newRun(changes ...func(*v1alpha1.BenchmarkRun)) *v1alpha1.BenchmarkRun {
	level := v1alpha1.Level2
	run := &v1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "run-a", Namespace: "bench"},
		Spec: v1alpha1.BenchmarkRunSpec{
			System:     v1alpha1.SystemPulsar,
			Durability: &v1alpha1.DurabilitySpec{Level: &level},
			Cluster:    v1alpha1.ClusterSpec{Managed: &v1alpha1.ManagedCluster{Brokers: 3}},
		},
	}
	for _, c := range changes {
		c(run)
	}
	return run
}

func translate(t *testing.T, run *v1alpha1.BenchmarkRun) v1alpha1.EffectiveDurability {
	t.Helper()
	eff, err := durability.Translate(run.Spec.System, run.Spec.DurabilityOrDefault())
	if err != nil {
		t.Fatalf("durability.Translate: %v", err)
	}
	return eff
}

// generic is v in its JSON form, as Helm stores and renders values.
func generic(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func fromYAML(t *testing.T, s string) any {
	t.Helper()
	var out any
	if err := yaml.Unmarshal([]byte(s), &out); err != nil {
		t.Fatalf("test YAML: %v", err)
	}
	return out
}

func hash6(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:6]
}

func qty(s string) *resource.Quantity { q := resource.MustParse(s); return &q }

func level(l v1alpha1.Level) func(*v1alpha1.BenchmarkRun) {
	return func(r *v1alpha1.BenchmarkRun) { r.Spec.Durability = &v1alpha1.DurabilitySpec{Level: &l} }
}

// assertConfigDataStrings checks that every configData value is a string:
// the chart writes configData into a ConfigMap, whose values must be.
func assertConfigDataStrings(t *testing.T, vals map[string]any) {
	t.Helper()
	for _, section := range []string{"zookeeper", "bookkeeper", "broker"} {
		s, _ := vals[section].(map[string]any)
		cd, ok := s["configData"]
		if !ok {
			continue
		}
		m, ok := cd.(map[string]any)
		if !ok {
			t.Fatalf("%s.configData is %T, want map[string]any", section, cd)
		}
		for k, v := range m {
			if _, ok := v.(string); !ok {
				t.Errorf("%s.configData[%s] is %T (%v), want a string", section, k, v, v)
			}
		}
	}
}

const defaultValuesYAML = `
fullnameOverride: run-a-pulsar
components:
  zookeeper: true
  oxia: false
  bookkeeper: true
  autorecovery: true
  broker: true
  proxy: false
  functions: false
  toolset: false
  pulsar_manager: false
affinity:
  anti_affinity: true
victoria-metrics-k8s-stack:
  enabled: false
job:
  ttl:
    enabled: false
zookeeper:
  replicaCount: 3
  affinity: {anti_affinity: true, type: preferredDuringSchedulingIgnoredDuringExecution}
  podMonitor: {enabled: false}
bookkeeper:
  replicaCount: 3
  affinity: {anti_affinity: true, type: requiredDuringSchedulingIgnoredDuringExecution}
  volumes:
    journal: {}
    ledgers: {}
  configData:
    journalWriteData: "true"
    journalSyncData: "false"
    journalMaxGroupWaitMSec: "1"
    PULSAR_PREFIX_journalPageCacheFlushIntervalMSec: "1000"
  podMonitor: {enabled: false}
broker:
  replicaCount: 3
  affinity: {anti_affinity: true, type: requiredDuringSchedulingIgnoredDuringExecution}
  configData:
    managedLedgerDefaultEnsembleSize: "3"
    managedLedgerDefaultWriteQuorum: "3"
    managedLedgerDefaultAckQuorum: "2"
    managedLedgerNewEntriesCheckDelayInMillis: "0"
    bookkeeperNumberOfChannelsPerBookie: "64"
  podMonitor: {enabled: false}
autorecovery:
  podMonitor: {enabled: false}
proxy:
  podMonitor: {enabled: false}
toolset:
  podMonitor: {enabled: false}
`

func TestValuesDefaultManagedCluster(t *testing.T) {
	run := newRun()
	vals, err := Values(run, translate(t, run))
	if err != nil {
		t.Fatal(err)
	}
	assertConfigDataStrings(t, vals)
	if diff := cmp.Diff(fromYAML(t, defaultValuesYAML), generic(t, vals)); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
}

func TestValuesSections(t *testing.T) {
	nvme := func(r *v1alpha1.BenchmarkRun) {
		m := r.Spec.Cluster.Managed
		m.Placement = v1alpha1.Placement{
			NodeSelector: map[string]string{"node-pool": "pulsar"},
			Tolerations: []corev1.Toleration{{
				Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "pulsar", Effect: corev1.TaintEffectNoSchedule,
			}},
		}
		m.Storage = v1alpha1.StorageSpec{
			Journal: v1alpha1.VolumeSpec{StorageClassName: ptr.To("local-nvme"), Size: qty("100Gi")},
			Ledgers: v1alpha1.VolumeSpec{StorageClassName: ptr.To("local-nvme-ledgers"), Size: qty("1Ti")},
			// ZooKeeper's own class (off the pool), its size only.
			MetadataStore: v1alpha1.VolumeSpec{StorageClassName: ptr.To("standard"), Size: qty("8Gi")},
		}
		m.Resources = v1alpha1.ComponentResources{
			Bookie: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("16Gi")},
			},
			Broker: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("8Gi")},
			},
			MetadataStore: corev1.ResourceRequirements{
				Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")},
			},
		}
	}

	tests := []struct {
		name string
		run  *v1alpha1.BenchmarkRun
		// want maps a top-level values key to its whole expected section.
		want map[string]string
	}{
		{
			name: "NVMe placement, storage classes and resources",
			run:  newRun(nvme),
			want: map[string]string{
				"bookkeeper": `
replicaCount: 3
affinity: {anti_affinity: true, type: requiredDuringSchedulingIgnoredDuringExecution}
nodeSelector: {node-pool: pulsar}
tolerations:
- {key: dedicated, operator: Equal, value: pulsar, effect: NoSchedule}
resources:
  requests: {cpu: "4", memory: 16Gi}
  limits: {memory: 16Gi}
volumes:
  journal: {storageClassName: local-nvme, size: 100Gi}
  ledgers: {storageClassName: local-nvme-ledgers, size: 1Ti}
configData:
  journalWriteData: "true"
  journalSyncData: "false"
  journalMaxGroupWaitMSec: "1"
  PULSAR_PREFIX_journalPageCacheFlushIntervalMSec: "1000"
  PULSAR_MEM: -Xms4915m -Xmx4915m -XX:MaxDirectMemorySize=8192m
podMonitor: {enabled: false}
`,
				"broker": `
replicaCount: 3
affinity: {anti_affinity: true, type: requiredDuringSchedulingIgnoredDuringExecution}
nodeSelector: {node-pool: pulsar}
tolerations:
- {key: dedicated, operator: Equal, value: pulsar, effect: NoSchedule}
# The request only: the limit is set to it, so the page cache is bounded
# as the Kafka twin's is (internal/provision/envelope).
resources:
  requests: {memory: 8Gi}
  limits: {memory: 8Gi}
configData:
  managedLedgerDefaultEnsembleSize: "3"
  managedLedgerDefaultWriteQuorum: "3"
  managedLedgerDefaultAckQuorum: "2"
  managedLedgerNewEntriesCheckDelayInMillis: "0"
  bookkeeperNumberOfChannelsPerBookie: "64"
  PULSAR_MEM: -Xms3276m -Xmx3276m -XX:MaxDirectMemorySize=3276m
podMonitor: {enabled: false}
`,
				// Not pinned to the pool: ZooKeeper is off the data path;
				// it tolerates the pool's taint all the same, so a cluster
				// whose every node is tainted still runs it.
				"zookeeper": `
replicaCount: 3
affinity: {anti_affinity: true, type: preferredDuringSchedulingIgnoredDuringExecution}
tolerations:
- {key: dedicated, operator: Equal, value: pulsar, effect: NoSchedule}
resources:
  limits: {memory: 2Gi}
volumes:
  data: {storageClassName: standard, size: 8Gi}
configData:
  PULSAR_MEM: -Xms1228m -Xmx1228m
podMonitor: {enabled: false}
`,
				"autorecovery": `
tolerations:
- {key: dedicated, operator: Equal, value: pulsar, effect: NoSchedule}
podMonitor: {enabled: false}
`,
				// The init Jobs.
				"pulsar_metadata": `
tolerations:
- {key: dedicated, operator: Equal, value: pulsar, effect: NoSchedule}
`,
			},
		},
		{
			name: "auxiliaryPlacement: ZooKeeper, autorecovery and the init Jobs on nodes of their own",
			run: newRun(nvme, func(r *v1alpha1.BenchmarkRun) {
				r.Spec.Cluster.Managed.AuxiliaryPlacement = &v1alpha1.Placement{
					NodeSelector: map[string]string{"node-pool": "system"},
					Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "system", Effect: corev1.TaintEffectNoSchedule}},
				}
			}),
			want: map[string]string{
				// Its tolerations only: the pool's are not added.
				"autorecovery": `
nodeSelector: {node-pool: system}
tolerations:
- {key: dedicated, operator: Equal, value: system, effect: NoSchedule}
podMonitor: {enabled: false}
`,
				"pulsar_metadata": `
nodeSelector: {node-pool: system}
tolerations:
- {key: dedicated, operator: Equal, value: system, effect: NoSchedule}
`,
				"zookeeper": `
replicaCount: 3
affinity: {anti_affinity: true, type: preferredDuringSchedulingIgnoredDuringExecution}
nodeSelector: {node-pool: system}
tolerations:
- {key: dedicated, operator: Equal, value: system, effect: NoSchedule}
resources:
  limits: {memory: 2Gi}
volumes:
  data: {storageClassName: standard, size: 8Gi}
configData:
  PULSAR_MEM: -Xms1228m -Xmx1228m
podMonitor: {enabled: false}
`,
			},
		},
		{
			name: "level 1: journal fsync before the ack, no flush interval",
			run:  newRun(level(v1alpha1.Level1)),
			want: map[string]string{"bookkeeper": `
replicaCount: 3
affinity: {anti_affinity: true, type: requiredDuringSchedulingIgnoredDuringExecution}
volumes: {journal: {}, ledgers: {}}
configData:
  journalWriteData: "true"
  journalSyncData: "true"
  journalMaxGroupWaitMSec: "1"
podMonitor: {enabled: false}
`},
		},
		{
			name: "level 2 with an explicit flush interval: the prefixed key carries it",
			run: newRun(func(r *v1alpha1.BenchmarkRun) {
				r.Spec.Durability = &v1alpha1.DurabilitySpec{
					Replication: &v1alpha1.ReplicationDurability{Replicas: 3, AckReplicas: 2, Mode: v1alpha1.ReplicationSync},
					Local:       &v1alpha1.LocalDurability{Mode: v1alpha1.LocalAsync, FlushIntervalMs: ptr.To(int32(200))},
				}
			}),
			want: map[string]string{"bookkeeper": `
replicaCount: 3
affinity: {anti_affinity: true, type: requiredDuringSchedulingIgnoredDuringExecution}
volumes: {journal: {}, ledgers: {}}
configData:
  journalWriteData: "true"
  journalSyncData: "false"
  journalMaxGroupWaitMSec: "1"
  PULSAR_PREFIX_journalPageCacheFlushIntervalMSec: "200"
podMonitor: {enabled: false}
`},
		},
		{
			name: "level 4 with the journal bypassed: ack quorum 1",
			run: newRun(func(r *v1alpha1.BenchmarkRun) {
				r.Spec.Durability = &v1alpha1.DurabilitySpec{
					Replication: &v1alpha1.ReplicationDurability{Replicas: 3, AckReplicas: 2, Mode: v1alpha1.ReplicationAsync},
					Local:       &v1alpha1.LocalDurability{Mode: v1alpha1.LocalAsync, Journal: v1alpha1.JournalBypass},
				}
			}),
			want: map[string]string{
				"bookkeeper": `
replicaCount: 3
affinity: {anti_affinity: true, type: requiredDuringSchedulingIgnoredDuringExecution}
volumes: {journal: {}, ledgers: {}}
configData:
  journalWriteData: "false"
  journalSyncData: "false"
podMonitor: {enabled: false}
`,
				"broker": `
replicaCount: 3
affinity: {anti_affinity: true, type: requiredDuringSchedulingIgnoredDuringExecution}
configData:
  managedLedgerDefaultEnsembleSize: "3"
  managedLedgerDefaultWriteQuorum: "3"
  managedLedgerDefaultAckQuorum: "1"
  managedLedgerNewEntriesCheckDelayInMillis: "0"
  bookkeeperNumberOfChannelsPerBookie: "64"
podMonitor: {enabled: false}
`,
			},
		},
		{
			name: "bookieConfig and brokerConfig overlay the translation",
			run: newRun(func(r *v1alpha1.BenchmarkRun) {
				m := r.Spec.Cluster.Managed
				m.BookieConfig = map[string]string{
					// Plain spelling of a key that needs the prefix: it
					// must override the translated PULSAR_PREFIX_ entry,
					// not sit beside it.
					"journalPageCacheFlushIntervalMSec": "500",
					"dbStorage_writeCacheMaxSizeMb":     "512",
					"PULSAR_MEM":                        "-Xms2g -Xmx2g",
				}
				m.BrokerConfig = map[string]string{
					"managedLedgerNewEntriesCheckDelayInMillis": "10",
					"PULSAR_PREFIX_brokerDeduplicationEnabled":  "false",
				}
				// The overlay's PULSAR_MEM wins over the one derived
				// from the memory limit.
				m.Resources.Bookie.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("16Gi")}
			}),
			want: map[string]string{
				"bookkeeper": `
replicaCount: 3
affinity: {anti_affinity: true, type: requiredDuringSchedulingIgnoredDuringExecution}
volumes: {journal: {}, ledgers: {}}
resources:
  limits: {memory: 16Gi}
configData:
  journalWriteData: "true"
  journalSyncData: "false"
  journalMaxGroupWaitMSec: "1"
  PULSAR_PREFIX_journalPageCacheFlushIntervalMSec: "500"
  dbStorage_writeCacheMaxSizeMb: "512"
  PULSAR_MEM: -Xms2g -Xmx2g
podMonitor: {enabled: false}
`,
				"broker": `
replicaCount: 3
affinity: {anti_affinity: true, type: requiredDuringSchedulingIgnoredDuringExecution}
configData:
  managedLedgerDefaultEnsembleSize: "3"
  managedLedgerDefaultWriteQuorum: "3"
  managedLedgerDefaultAckQuorum: "2"
  managedLedgerNewEntriesCheckDelayInMillis: "10"
  bookkeeperNumberOfChannelsPerBookie: "64"
  PULSAR_PREFIX_brokerDeduplicationEnabled: "false"
podMonitor: {enabled: false}
`,
			},
		},
		{
			name: "counts and version",
			run: newRun(func(r *v1alpha1.BenchmarkRun) {
				m := r.Spec.Cluster.Managed
				m.MetadataStoreReplicas, m.Bookies, m.Brokers = 5, 4, 2
				m.Version = "4.0.12"
			}),
			want: map[string]string{
				"defaultPulsarImageTag": `"4.0.12"`,
				"zookeeper": `
replicaCount: 5
affinity: {anti_affinity: true, type: preferredDuringSchedulingIgnoredDuringExecution}
podMonitor: {enabled: false}
`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vals, err := Values(tt.run, translate(t, tt.run))
			if err != nil {
				t.Fatal(err)
			}
			assertConfigDataStrings(t, vals)
			got := generic(t, vals).(map[string]any)
			for section, want := range tt.want {
				if diff := cmp.Diff(fromYAML(t, want), got[section]); diff != "" {
					t.Errorf("%s (-want +got):\n%s", section, diff)
				}
			}
		})
	}
}

func TestValuesCountsFromSpec(t *testing.T) {
	run := newRun(func(r *v1alpha1.BenchmarkRun) {
		m := r.Spec.Cluster.Managed
		m.MetadataStoreReplicas, m.Bookies, m.Brokers = 5, 4, 2
	})
	vals, err := Values(run, translate(t, run))
	if err != nil {
		t.Fatal(err)
	}
	for section, want := range map[string]int{"zookeeper": 5, "bookkeeper": 4, "broker": 2} {
		if got := vals[section].(map[string]any)["replicaCount"]; got != want {
			t.Errorf("%s.replicaCount = %v, want %d", section, got, want)
		}
	}
	// A Go caller that bypassed the CRD's defaulting gets the same counts.
	run.Spec.Cluster.Managed = &v1alpha1.ManagedCluster{}
	vals, err = Values(run, translate(t, run))
	if err != nil {
		t.Fatal(err)
	}
	for _, section := range []string{"zookeeper", "bookkeeper", "broker"} {
		if got := vals[section].(map[string]any)["replicaCount"]; got != 3 {
			t.Errorf("%s.replicaCount = %v with nothing set, want 3", section, got)
		}
	}
}

func TestValuesErrors(t *testing.T) {
	pulsarEff := translate(t, newRun())
	tests := []struct {
		name string
		run  *v1alpha1.BenchmarkRun
		eff  *v1alpha1.EffectiveDurability
		want []string
	}{
		{
			name: "kafka run",
			run:  newRun(func(r *v1alpha1.BenchmarkRun) { r.Spec.System = v1alpha1.SystemKafka }),
			want: []string{`spec.system is "kafka"`, "Strimzi"},
		},
		{
			name: "existing cluster",
			run: newRun(func(r *v1alpha1.BenchmarkRun) {
				r.Spec.Cluster = v1alpha1.ClusterSpec{Existing: &v1alpha1.ExistingCluster{ServiceURL: "pulsar://x:6650", AdminURL: "http://x:8080"}}
			}),
			want: []string{"spec.cluster.managed is not set"},
		},
		{
			name: "durability translated for kafka",
			run:  newRun(),
			eff:  &v1alpha1.EffectiveDurability{Kafka: &v1alpha1.KafkaDurability{}},
			want: []string{"no Pulsar settings", "durability.Translate"},
		},
		{
			name: "fewer bookies than the ensemble",
			run:  newRun(func(r *v1alpha1.BenchmarkRun) { r.Spec.Cluster.Managed.Bookies = 2 }),
			want: []string{"spec.cluster.managed.bookies (2) must be at least the ensemble size (3"},
		},
		{
			name: "bad version, bad config key, empty class, zero size: all reported",
			run: newRun(func(r *v1alpha1.BenchmarkRun) {
				m := r.Spec.Cluster.Managed
				m.Version = "4.0.12; rm -rf /"
				m.BookieConfig = map[string]string{"journal sync": "true"}
				m.BrokerConfig = map[string]string{"a=b": "c"}
				m.Storage.Journal.StorageClassName = ptr.To("")
				m.Storage.Ledgers.Size = qty("0")
				m.Storage.MetadataStore.StorageClassName = ptr.To("")
			}),
			want: []string{
				`spec.cluster.managed.version "4.0.12; rm -rf /" is not an image tag`,
				`spec.cluster.managed.bookieConfig key "journal sync"`,
				`spec.cluster.managed.brokerConfig key "a=b"`,
				"spec.cluster.managed.storage.journal.storageClassName is empty",
				"spec.cluster.managed.storage.ledgers.size (0) must be positive",
				"spec.cluster.managed.storage.metadataStore.storageClassName is empty",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eff := pulsarEff
			if tt.eff != nil {
				eff = *tt.eff
			}
			_, err := Values(tt.run, eff)
			if err == nil {
				t.Fatal("Values succeeded, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// TestPrefixedKeysAreTheTranslationsMissingKeys pins the explicit list:
// of the keys the durability translation can produce, exactly
// journalPageCacheFlushIntervalMSec gets the prefix. A key added to the
// translation must be classified here on purpose.
func TestPrefixedKeysAreTheTranslationsMissingKeys(t *testing.T) {
	bookieKeys := map[string]bool{}
	brokerKeys := map[string]bool{}
	for l := v1alpha1.Level1; l <= v1alpha1.Level4; l++ {
		for _, spec := range []v1alpha1.DurabilitySpec{
			{Level: &l},
		} {
			eff, err := durability.Translate(v1alpha1.SystemPulsar, spec)
			if err != nil {
				t.Fatal(err)
			}
			for k := range eff.Pulsar.Bookie {
				bookieKeys[k] = true
			}
			for k := range eff.Pulsar.Broker {
				brokerKeys[k] = true
			}
		}
	}
	known := map[string]bool{
		durability.PulsarBookieJournalWriteData:          false,
		durability.PulsarBookieJournalSyncData:           false,
		durability.PulsarBookieJournalMaxGroupWaitMSec:   false,
		durability.PulsarBookieJournalPageCacheFlushMSec: true,
	}
	for k := range bookieKeys {
		prefixed, ok := known[k]
		if !ok {
			t.Errorf("bookie key %q from the translation is not classified; check conf/bookkeeper.conf and add it to this test (and to bookieKeysNeedingPrefix if the file lacks it)", k)
			continue
		}
		if bookieKeysNeedingPrefix[k] != prefixed {
			t.Errorf("bookie key %q: prefixed = %v, want %v", k, bookieKeysNeedingPrefix[k], prefixed)
		}
	}
	for k := range brokerKeys {
		if brokerKeysNeedingPrefix[k] {
			t.Errorf("broker key %q is prefixed; the chart reads broker durability keys by their plain names", k)
		}
	}
}

func TestEnablePodMonitors(t *testing.T) {
	run := newRun()
	rel, err := ReleaseFor(run, translate(t, run))
	if err != nil {
		t.Fatal(err)
	}
	EnablePodMonitors(&rel, map[string]string{"release": "kps"})
	for c, on := range map[string]bool{"zookeeper": true, "bookkeeper": true, "autorecovery": true, "broker": true, "proxy": false, "toolset": false} {
		got := generic(t, rel.Values[c].(map[string]any)["podMonitor"])
		if diff := cmp.Diff(fromYAML(t, fmt.Sprintf("{enabled: %v}", on)), got); diff != "" {
			t.Errorf("%s.podMonitor (-want +got):\n%s", c, diff)
		}
	}
	if !maps.Equal(rel.MonitorLabels, map[string]string{"release": "kps"}) {
		t.Errorf("MonitorLabels = %v, want release: kps (set by the post-render)", rel.MonitorLabels)
	}
}

func TestReleaseName(t *testing.T) {
	long := "throughput-1kb-100-partitions-ack2-async-nvme"
	tests := []struct {
		run  string
		want string
	}{
		{"run-a", "run-a-pulsar"},
		{"run-ack2-async-xq7z", "run-ack2-async-xq7z-pulsar"},
		// Sanitized names get a hash so that Run.A and run-a differ.
		{"Run.A", "run-a-" + hash6("Run.A") + "-pulsar"},
		{"1st", "sb-1st-" + hash6("1st") + "-pulsar"},
		{long, "throughput-1kb-100-par-" + hash6(long) + "-pulsar"},
	}
	for _, tt := range tests {
		got := ReleaseName(&v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: tt.run}})
		if got != tt.want {
			t.Errorf("ReleaseName(%q) = %q, want %q", tt.run, got, tt.want)
		}
		if len(got) > MaxReleaseNameLength {
			t.Errorf("ReleaseName(%q) = %q is %d long, more than %d", tt.run, got, len(got), MaxReleaseNameLength)
		}
	}
	a := ReleaseName(&v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: long + "-1"}})
	b := ReleaseName(&v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: long + "-2"}})
	if a == b {
		t.Errorf("two long run names share release %q", a)
	}
}
