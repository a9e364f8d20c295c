package pulsar

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"

	"github.com/streambench/streambench-operator/internal/provision"

	corev1 "k8s.io/api/core/v1"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/provision/envelope"
)

// Defaults of a managed Pulsar cluster when the spec leaves a count unset:
// the spec's own (api/v1alpha1/defaults.go).
const (
	DefaultBrokers               = v1alpha1.DefaultBrokers
	DefaultBookies               = v1alpha1.DefaultBookies
	DefaultMetadataStoreReplicas = v1alpha1.DefaultMetadataStoreReplicas
)

// Component names as the chart uses them in object names
// (<fullname>-<component>): the chart's zookeeper.component,
// bookkeeper.component, autorecovery.component, broker.component and
// proxy.component defaults, which Values leaves alone.
const (
	ComponentZooKeeper = "zookeeper"
	ComponentBookie    = "bookie"
	ComponentRecovery  = "recovery"
	ComponentBroker    = "broker"
	ComponentProxy     = "proxy"
)

// The chart's init Jobs: <fullname>-<pulsar_metadata.component> and
// <fullname>-<bookkeeper.component>-init.
const (
	JobPulsarInit = "pulsar-init"
	JobBookieInit = "bookie-init"
)

// Broker ports (the chart's broker.ports defaults).
const (
	BrokerServicePort = 6650
	BrokerHTTPPort    = 8080
)

// PulsarPrefix makes bin/apply-config-from-env.py append a key that is not
// in the configuration file.
const PulsarPrefix = "PULSAR_PREFIX_"

// bookieKeysNeedingPrefix are bookkeeper.conf keys that Pulsar's
// conf/bookkeeper.conf does not contain, not even commented out. The
// chart turns configData into environment variables and the image's
// bin/apply-config-from-env.py rewrites only keys already in the file;
// an unknown plain key is dropped without a word, so these keys must be
// written as PULSAR_PREFIX_<key>, which the script appends to the file
// (and applies after the plain keys, so the prefixed spelling wins).
//
// The list is explicit on purpose: prefixing every key would be wrong.
// The chart's templates read some configData keys by their plain names
// (the broker's wait for bookies reads
// broker.configData.managedLedgerDefaultEnsembleSize), and a prefixed
// key would leave the chart's own default in their place.
var bookieKeysNeedingPrefix = map[string]bool{
	// Table 1-13 (async local durability with the journal): the journal
	// flush interval. conf/bookkeeper.conf of Pulsar 4.0 has no line for
	// it, so without the prefix the bookie would keep BookKeeper's
	// default and the run would not get the interval status.durability
	// reports.
	durability.PulsarBookieJournalPageCacheFlushMSec: true,
}

// brokerKeysNeedingPrefix is the broker.conf counterpart. Every broker key
// of the durability translation (managedLedgerDefaultEnsembleSize,
// -WriteQuorum, -AckQuorum, managedLedgerNewEntriesCheckDelayInMillis,
// bookkeeperNumberOfChannelsPerBookie) is in conf/broker.conf, and the
// chart's broker template reads managedLedgerDefaultEnsembleSize from
// broker.configData by its plain name, so none is prefixed.
var brokerKeysNeedingPrefix = map[string]bool{
	// The BookKeeper client's own settings reach the broker's client as
	// bookkeeper_<key>; broker.conf has none of them. delayEnsembleChange
	// is the one a fault comparison turns on (docs/methodology.md, "One
	// bookie lost": writes go on at the ack quorum with no spare bookie).
	durability.PulsarBrokerDelayEnsembleChange: true,
}

// configMapKey matches what a ConfigMap accepts as a key; the chart puts
// configData into a ConfigMap that the pods read with envFrom.
var configMapKey = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)

// imageTag matches a container image tag.
var imageTag = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)

// MaxReleaseNameLength bounds ReleaseName. The chart names objects
// <release>-<component> (fullnameOverride is the release name, see
// Values); the longest is <release>-zookeeper. A StatefulSet's pods carry
// the label controller-revision-hash=<statefulset>-<hash of up to 10
// characters>, a label value of at most 63 characters, so the StatefulSet
// name must stay under 52: 36 + len("-zookeeper") = 46 leaves room.
const MaxReleaseNameLength = 36

// releaseSuffix makes the release's object names say what they are
// (run-a-pulsar-broker) and keeps them apart from the run's other objects
// (workers, results) that the controller names after the run.
const releaseSuffix = "-pulsar"

// ReleaseName is the Helm release name of the run's Pulsar cluster:
// <run name>-pulsar when the run's name is a DNS-1035 label short enough
// for MaxReleaseNameLength. Any other name is sanitized, cut, and gets the
// first 6 hex digits of its SHA-256, so two runs never share a release and
// the same run always gets the same one.
func ReleaseName(run *v1alpha1.BenchmarkRun) string {
	return provision.DNSLabel(run.Name, MaxReleaseNameLength-len(releaseSuffix), 6) + releaseSuffix
}

// Counts are the replica counts of a managed run, defaults applied.
type Counts struct {
	ZooKeeper int32
	Bookies   int32
	Brokers   int32
}

// CountsOf returns the replica counts of a managed cluster.
func CountsOf(m *v1alpha1.ManagedCluster) Counts {
	return Counts{ZooKeeper: m.MetadataStoreReplicasOrDefault(), Bookies: m.BookiesOrDefault(), Brokers: m.BrokersOrDefault()}
}

// components is the chart's components map as Values sets it. Ready
// expects exactly the StatefulSets of the enabled ones.
//
//   - proxy off: OMB and the source studies' (docs/methodology.md) clients talk to the brokers directly,
//     as Kafka clients do; a proxy would add a network hop on the Pulsar
//     side only. Workers use the broker service (ServiceURL).
//   - autorecovery on: without it the bookies run the recovery daemon
//     in-process (the chart sets autoRecoveryDaemonEnabled=false only when
//     the component is on), and a Pulsar cluster without recovery is not
//     the one people run. It is one small pod off the write path.
//   - functions, toolset, pulsar_manager, oxia off: nothing in a benchmark
//     uses them; pulsar-admin is in every broker pod for debugging.
//     Functions would also make the chart create a ClusterRole and
//     ClusterRoleBinding per run, which the operator would need the right
//     to grant. ZooKeeper is the metadata store (metadataStoreReplicas).
func components() map[string]any {
	return map[string]any{
		"zookeeper":      true,
		"oxia":           false,
		"bookkeeper":     true,
		"autorecovery":   true,
		"broker":         true,
		"proxy":          false,
		"functions":      false,
		"toolset":        false,
		"pulsar_manager": false,
	}
}

// statefulSetComponents are the components whose StatefulSets Ready waits
// for; they match components().
var statefulSetComponents = []string{ComponentZooKeeper, ComponentBookie, ComponentRecovery, ComponentBroker}

// podMonitorComponents are the values sections with a podMonitor switch.
var podMonitorComponents = []string{"zookeeper", "bookkeeper", "autorecovery", "broker", "proxy", "toolset"}

// The chart's <component>.affinity.type values.
const (
	antiAffinityRequired  = "requiredDuringSchedulingIgnoredDuringExecution"
	antiAffinityPreferred = "preferredDuringSchedulingIgnoredDuringExecution"
)

// antiAffinity is the chart's per-component anti-affinity setting: one
// podAntiAffinity term between pods of the component, per node
// (kubernetes.io/hostname), of the given type.
//
//   - Bookies and brokers: required, as the Kafka brokers' node pool
//     (strimzi.withBrokerAntiAffinity) and the chart's own default. Two
//     bookies of an ensemble-3 ledger on one machine make "replicated to
//     3 machines before the ack" untrue without a word, and the two
//     systems must land on the nodes the same way. A pool with fewer
//     nodes than replicas leaves the extra pods Pending, and the run says
//     which and why (Unschedulable) until the provisioning deadline.
//   - ZooKeeper: preferred. It is off the write path (a ledger's entries
//     never pass through it), so two of its replicas on one node change
//     no measured guarantee; required would make a 3-replica metadata
//     store need three nodes of its own (auxiliaryPlacement) and refuse
//     small clusters for nothing a benchmark measures.
//   - Autorecovery: the chart's default (required) is left: it is one pod.
func antiAffinity(typ string) map[string]any {
	return map[string]any{
		"anti_affinity": true,
		"type":          typ,
	}
}

// AuxiliaryPlacementOf is where the run's components off the data path
// (ZooKeeper, autorecovery, the init Jobs) go: spec.cluster.managed.
// auxiliaryPlacement as it is when set; else placement's tolerations (a
// cluster whose every node is tainted, one pool or one node, can still run
// them) and a preferred node affinity away from each label of placement's
// nodeSelector (avoidNodes), so they leave the bookies' and brokers' nodes
// to them where other nodes exist. A placement by affinity alone gives
// nothing to avoid: its required node affinity is not negated.
func AuxiliaryPlacementOf(m *v1alpha1.ManagedCluster) v1alpha1.Placement {
	if m.AuxiliaryPlacement != nil {
		return *m.AuxiliaryPlacement.DeepCopy()
	}
	var out v1alpha1.Placement
	for _, t := range m.Placement.Tolerations {
		out.Tolerations = append(out.Tolerations, *t.DeepCopy())
	}
	out.Affinity = avoidNodes(m.Placement.NodeSelector)
	return out
}

// avoidNodes is a preferred node affinity for nodes that do not match
// nodeSelector: one term per label (not (a and b) is (not a) or (not b)),
// weight 100 each; nil for an empty selector. NotIn also matches a node
// without the label.
func avoidNodes(nodeSelector map[string]string) *corev1.Affinity {
	if len(nodeSelector) == 0 {
		return nil
	}
	var terms []corev1.PreferredSchedulingTerm
	for _, k := range slices.Sorted(maps.Keys(nodeSelector)) {
		terms = append(terms, corev1.PreferredSchedulingTerm{Weight: 100, Preference: corev1.NodeSelectorTerm{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: k, Operator: corev1.NodeSelectorOpNotIn, Values: []string{nodeSelector[k]}}},
		}})
	}
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: terms}}
}

// Values returns the Apache Pulsar chart values for a managed Pulsar run
// whose durability was translated to eff (durability.Translate with
// SystemPulsar). The map holds only strings, bools, ints, maps and slices,
// and every configData value is a string, as the chart requires.
func Values(run *v1alpha1.BenchmarkRun, eff v1alpha1.EffectiveDurability) (map[string]any, error) {
	if run == nil {
		return nil, errors.New("pulsar values: no BenchmarkRun given")
	}
	if run.Spec.System != v1alpha1.SystemPulsar {
		return nil, fmt.Errorf("spec.system is %q, but the Pulsar chart deploys pulsar only; use the Strimzi builders for kafka", run.Spec.System)
	}
	m := run.Spec.Cluster.Managed
	if m == nil {
		return nil, errors.New("spec.cluster.managed is not set: an existing cluster is not deployed; set spec.cluster.managed to deploy Pulsar for the run")
	}
	if eff.Pulsar == nil {
		return nil, errors.New("status.durability has no Pulsar settings: translate spec.durability with durability.Translate(pulsar, ...) before building the chart values")
	}
	counts := CountsOf(m)
	var errs []error
	if counts.Bookies < eff.Pulsar.EnsembleSize {
		errs = append(errs, fmt.Errorf("spec.cluster.managed.bookies (%d) must be at least the ensemble size (%d, spec.durability.replication.replicas); add bookies or lower replicas", counts.Bookies, eff.Pulsar.EnsembleSize))
	}
	if m.Version != "" && !imageTag.MatchString(m.Version) {
		errs = append(errs, fmt.Errorf("spec.cluster.managed.version %q is not an image tag of apachepulsar/pulsar-all; set a Pulsar version such as 4.0.12, or remove it for the chart's default", m.Version))
	}

	bookieConfig, err := configData("spec.cluster.managed.bookieConfig", eff.Pulsar.Bookie, m.BookieConfig, bookieKeysNeedingPrefix)
	errs = append(errs, err)
	brokerConfig, err := configData("spec.cluster.managed.brokerConfig", eff.Pulsar.Broker, m.BrokerConfig, brokerKeysNeedingPrefix)
	errs = append(errs, err)

	journal, err := volume("spec.cluster.managed.storage.journal", m.Storage.Journal)
	errs = append(errs, err)
	ledgers, err := volume("spec.cluster.managed.storage.ledgers", m.Storage.Ledgers)
	errs = append(errs, err)
	zkData, err := volume("spec.cluster.managed.storage.metadataStore", m.Storage.MetadataStore)
	errs = append(errs, err)

	// Each component's envelope (internal/provision/envelope): a memory
	// request without a limit gets the request as its limit, and the JVM
	// is sized from the limit, as the Kafka twin's is.
	envs := EnvelopesOf(m)
	zkResources, err := resources("spec.cluster.managed.resources.metadataStore", envs.ZooKeeper.Resources)
	errs = append(errs, err)
	bookieResources, err := resources("spec.cluster.managed.resources.bookie", envs.Bookie.Resources)
	errs = append(errs, err)
	brokerResources, err := resources("spec.cluster.managed.resources.broker", envs.Broker.Resources)
	errs = append(errs, err)

	tolerations, err := toValue(m.Placement.Tolerations)
	errs = append(errs, err)
	aux := AuxiliaryPlacementOf(m)
	auxTolerations, err := toValue(aux.Tolerations)
	errs = append(errs, err)
	sec := SecurityOf(run)
	errs = append(errs, checkSecurity(m), checkSecurityOverlay(sec, m.BrokerConfig))
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}

	zkConfig := map[string]any{}
	setMemory(zkConfig, envs.ZooKeeper, nil)
	setMemory(bookieConfig, envs.Bookie, m.BookieConfig)
	setMemory(brokerConfig, envs.Broker, m.BrokerConfig)

	release := ReleaseName(run)
	vals := map[string]any{
		// Object names are <release>-<component> whatever the release is
		// called; the chart would otherwise append "-pulsar" to release
		// names that do not contain "pulsar".
		"fullnameOverride": release,
		"components":       components(),
		// The global switch must stay on for the per-component settings
		// below to apply.
		"affinity": map[string]any{"anti_affinity": true},
		// The bundled monitoring stack would deploy VictoriaMetrics,
		// Grafana and node exporters per run, on the benchmark's nodes.
		"victoria-metrics-k8s-stack": map[string]any{"enabled": false},
		// With a TTL the completed init Jobs are deleted, and Ready could
		// no longer tell "succeeded" from "not created yet".
		"job": map[string]any{"ttl": map[string]any{"enabled": false}},
		"zookeeper": map[string]any{
			"replicaCount": int(counts.ZooKeeper),
			"affinity":     antiAffinity(antiAffinityPreferred),
		},
		"bookkeeper": map[string]any{
			"replicaCount": int(counts.Bookies),
			"affinity":     antiAffinity(antiAffinityRequired),
			"volumes": map[string]any{
				"journal": journal,
				"ledgers": ledgers,
			},
			"configData": bookieConfig,
		},
		"broker": map[string]any{
			"replicaCount": int(counts.Brokers),
			"affinity":     antiAffinity(antiAffinityRequired),
			"configData":   brokerConfig,
		},
	}
	if m.Version != "" {
		vals["defaultPulsarImageTag"] = m.Version
	}
	// TLS and token authentication (security.go).
	maps.Copy(vals, securityValues(sec, release))

	zk := vals["zookeeper"].(map[string]any)
	bk := vals["bookkeeper"].(map[string]any)
	br := vals["broker"].(map[string]any)
	if len(zkConfig) > 0 {
		zk["configData"] = zkConfig
	}
	if len(zkData) > 0 {
		// The chart's other data keys (name, selector) stay: Helm merges
		// this map into its defaults.
		zk["volumes"] = map[string]any{"data": zkData}
	}
	setIf(zk, "resources", zkResources)
	setIf(bk, "resources", bookieResources)
	setIf(br, "resources", brokerResources)
	// Placement pins the data path (bookies and brokers) to the pool;
	// ZooKeeper, autorecovery and the init Jobs (pulsar_metadata holds
	// the Jobs': bookie-init, pulsar-init) go where AuxiliaryPlacementOf
	// says. The chart takes nodeSelector and tolerations through its
	// values; the affinity is the post-render's (AuxiliaryAffinityPostRenderer).
	for _, c := range []map[string]any{bk, br} {
		if len(m.Placement.NodeSelector) > 0 {
			c["nodeSelector"] = stringMap(m.Placement.NodeSelector)
		}
		if t, ok := tolerations.([]any); ok && len(t) > 0 {
			c["tolerations"] = tolerations
		}
	}
	for _, c := range []string{"zookeeper", "autorecovery", "pulsar_metadata"} {
		if len(aux.NodeSelector) > 0 {
			section(vals, c)["nodeSelector"] = stringMap(aux.NodeSelector)
		}
		if t, ok := auxTolerations.([]any); ok && len(t) > 0 {
			section(vals, c)["tolerations"] = auxTolerations
		}
	}

	// PodMonitors off: with the bundled stack disabled the chart renders
	// monitoring.coreos.com/v1 PodMonitors, and the install fails on a
	// cluster without the Prometheus Operator's CRDs. EnablePodMonitors
	// turns them back on where those CRDs exist.
	for _, c := range podMonitorComponents {
		section(vals, c)["podMonitor"] = map[string]any{"enabled": false}
	}
	return vals, nil
}

// section returns the values section name, made when missing.
func section(vals map[string]any, name string) map[string]any {
	s, ok := vals[name].(map[string]any)
	if !ok {
		s = map[string]any{}
		vals[name] = s
	}
	return s
}

// EnablePodMonitors turns on the chart's PodMonitors of the components a
// run deploys (zookeeper, bookkeeper, autorecovery, broker: the proxy and
// toolset are off, and a monitor of theirs would select nothing), and
// records labels for them, e.g. release: <kube-prometheus-stack release>
// so that its Prometheus selects them. The chart cannot take those labels
// through its values: it reads only the global podMonitor.customLabels,
// and writes them after its own release: <Pulsar release>, so the
// monitor would carry the key twice. The release's post-render sets them
// instead (PodMonitorRenderer). Call it only when the API server serves
// monitoring.coreos.com/v1 PodMonitor.
func EnablePodMonitors(rel *Release, labels map[string]string) {
	for _, c := range podMonitorComponents {
		section(rel.Values, c)["podMonitor"] = map[string]any{"enabled": deployedMonitors[c]}
	}
	rel.MonitorLabels = maps.Clone(labels)
}

// deployedMonitors are the podMonitorComponents a run deploys.
var deployedMonitors = map[string]bool{"zookeeper": true, "bookkeeper": true, "autorecovery": true, "broker": true}

// configData merges the durability translation's settings with the
// user's overlay (the overlay wins), in the key form the image's
// apply-config-from-env.py needs. field names the overlay in errors.
func configData(field string, translated, overlay map[string]string, needsPrefix map[string]bool) (map[string]any, error) {
	out := map[string]any{}
	for k, v := range translated {
		out[configKey(k, needsPrefix)] = v
	}
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(overlay)) {
		if !configMapKey.MatchString(k) {
			errs = append(errs, fmt.Errorf("%s key %q is not a valid configuration key (letters, digits, '-', '_' and '.'); fix or remove it", field, k))
			continue
		}
		out[configKey(k, needsPrefix)] = overlay[k]
	}
	return out, errors.Join(errs...)
}

// configKey returns key as the chart's configData needs it: with
// PULSAR_PREFIX_ when the configuration file lacks the key. A key the user
// already prefixed is kept, so both spellings override the same entry.
func configKey(key string, needsPrefix map[string]bool) string {
	if needsPrefix[key] {
		return PulsarPrefix + key
	}
	return key
}

// volume returns a bookkeeper.volumes.journal or .ledgers section; the
// chart's sizes (10Gi journal, 50Gi ledgers) apply when the spec has none.
func volume(field string, v v1alpha1.VolumeSpec) (map[string]any, error) {
	out := map[string]any{}
	if v.StorageClassName != nil {
		if *v.StorageClassName == "" {
			return nil, fmt.Errorf("%s.storageClassName is empty; name a StorageClass (e.g. the NVMe pool's local-storage class) or remove the field for the cluster default", field)
		}
		out["storageClassName"] = *v.StorageClassName
	}
	if v.Size != nil {
		if v.Size.Sign() <= 0 {
			return nil, fmt.Errorf("%s.size (%s) must be positive; set a size such as 50Gi or remove it for the chart's default", field, v.Size.String())
		}
		out["size"] = v.Size.String()
	}
	return out, nil
}

// resources returns r as chart values, or nil when r is empty so the
// chart's requests stay.
func resources(field string, r corev1.ResourceRequirements) (any, error) {
	if len(r.Limits) == 0 && len(r.Requests) == 0 && len(r.Claims) == 0 {
		return nil, nil
	}
	v, err := toValue(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	return v, nil
}

// Envelopes are what the run's Pulsar components get.
type Envelopes struct{ ZooKeeper, Bookie, Broker envelope.Envelope }

// EnvelopesOf sizes every component of a managed Pulsar cluster from its
// resources (envelope.Of).
func EnvelopesOf(m *v1alpha1.ManagedCluster) Envelopes {
	return Envelopes{
		ZooKeeper: envelope.Of(envelope.ZooKeeper, m.Resources.MetadataStore),
		Bookie:    envelope.Of(envelope.Bookie, m.Resources.Bookie),
		Broker:    envelope.Of(envelope.PulsarBroker, m.Resources.Broker),
	}
}

// setMemory sets PULSAR_MEM in config from the envelope, unless the user's
// overlay sets it or the component has no memory to size from.
func setMemory(config map[string]any, e envelope.Envelope, overlay map[string]string) {
	if _, ok := overlay["PULSAR_MEM"]; ok || e.HeapBytes == 0 {
		return
	}
	config["PULSAR_MEM"] = e.HeapFlags()
}

// toValue converts a Kubernetes API value into plain chart values (maps,
// slices, strings, numbers) through its JSON form, which is the form the
// chart's toYaml renders into the pod spec.
func toValue(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func setIf(m map[string]any, key string, v any) {
	if v == nil {
		return
	}
	if s, ok := v.([]any); ok && len(s) == 0 {
		return
	}
	m[key] = v
}

func stringMap(in map[string]string) map[string]any {
	out := make(map[string]any, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}
