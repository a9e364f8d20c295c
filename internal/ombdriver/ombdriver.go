// Package ombdriver reads OpenMessaging Benchmark (OMB) driver files
// (driver-kafka/kafka-*.yaml, driver-pulsar/pulsar*.yaml) and maps them onto
// spec.driver, so an OMB user's driver file runs unchanged.
//
// The mapping is a pure function of the file and the run's effective
// durability. The durability stays spec.durability's: a durability key in
// the file (acks, min.insync.replicas, flush.*, Pulsar's persistence quorums,
// replicationFactor) is accepted only when it says what spec.durability
// already sets, and refused otherwise with the message spec.driver gives.
// Keys that have no place in a streambench run (broker addresses, OMB's
// namespace naming, Java-client thread pools) are dropped and listed, each
// with the reason, so nothing changes a run silently.
//
// Security keys (Kafka's security.protocol, sasl.*, ssl.*; Pulsar's TLS
// and authentication keys) are mapped by MapSecurity in local mode, where
// the file's secrets and stores are on the machine, and refused by Map in
// a cluster, which takes its security from Secrets (security.go).
package ombdriver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver/kafka"
	"github.com/streambench/streambench-operator/internal/driver/pulsar"
	"github.com/streambench/streambench-operator/internal/durability"
)

// File is an OMB driver file as OMB reads it: Kafka's Config
// (replicationFactor and four java.util.Properties strings) or Pulsar's
// PulsarConfig (client, producer and consumer sections).
type File struct {
	Name        string
	DriverClass string
	System      v1alpha1.System

	// Kafka.
	ReplicationFactor *int32
	TopicConfig       map[string]string
	CommonConfig      map[string]string
	ProducerConfig    map[string]string
	ConsumerConfig    map[string]string

	// Pulsar, flattened: "persistence.ackQuorum" for nested keys.
	Client   map[string]string
	Producer map[string]string
	Consumer map[string]string
}

// Dropped is a key of the file that the run does not apply, and why.
type Dropped struct {
	Key string // e.g. "commonConfig: bootstrap.servers"
	Why string
}

func (d Dropped) String() string { return d.Key + ": " + d.Why }

var (
	kafkaKeys  = []string{"name", "driverClass", "replicationFactor", "reset", "topicConfig", "commonConfig", "producerConfig", "consumerConfig"}
	pulsarKeys = []string{"name", "driverClass", "client", "producer", "consumer"}
)

// Parse reads an OMB driver file. The system comes from driverClass
// (io.openmessaging.benchmark.driver.kafka.* or .pulsar.*). Unknown keys
// are errors (OMB ignores them; here a typo would silently change a run).
func Parse(data []byte) (File, error) {
	var f File
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return f, fmt.Errorf("driver file is not valid YAML: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var raw map[string]any
	if err := dec.Decode(&raw); err != nil || raw == nil {
		return f, errors.New("driver file must be a YAML mapping with name, driverClass and the driver's settings (OMB's driver-kafka/kafka.yaml or driver-pulsar/pulsar.yaml)")
	}
	f.Name, _ = raw["name"].(string)
	f.DriverClass, _ = raw["driverClass"].(string)
	var known []string
	switch {
	case strings.Contains(f.DriverClass, ".driver.kafka."):
		f.System, known = v1alpha1.SystemKafka, kafkaKeys
	case strings.Contains(f.DriverClass, ".driver.pulsar."):
		f.System, known = v1alpha1.SystemPulsar, pulsarKeys
	default:
		return f, fmt.Errorf("driverClass %q is not OMB's Kafka or Pulsar driver; use io.openmessaging.benchmark.driver.kafka.KafkaBenchmarkDriver or io.openmessaging.benchmark.driver.pulsar.PulsarBenchmarkDriver", f.DriverClass)
	}
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		if !slices.Contains(known, k) {
			errs = append(errs, fmt.Errorf("unknown key %q in an OMB %s driver file; known keys: %s", k, f.System, strings.Join(known, ", ")))
		}
	}
	if f.System == v1alpha1.SystemKafka {
		if v, ok := raw["replicationFactor"]; ok && v != nil {
			n, err := strconv.ParseInt(fmt.Sprint(v), 10, 16)
			if err != nil || n < 1 {
				errs = append(errs, fmt.Errorf("replicationFactor must be a whole number of at least 1, got %v", v))
			} else {
				rf := int32(n)
				f.ReplicationFactor = &rf
			}
		}
		props := func(key string) map[string]string {
			v, ok := raw[key]
			if !ok || v == nil {
				return nil
			}
			s, ok := v.(string)
			if !ok {
				errs = append(errs, fmt.Errorf("%s must be a string of Java properties (key=value per line, e.g. %s: |\\n  linger.ms=1), got %T", key, key, v))
				return nil
			}
			return ParseProperties(s)
		}
		f.TopicConfig, f.CommonConfig = props("topicConfig"), props("commonConfig")
		f.ProducerConfig, f.ConsumerConfig = props("producerConfig"), props("consumerConfig")
	} else {
		section := func(key string) map[string]string {
			v, ok := raw[key]
			if !ok || v == nil {
				return nil
			}
			m, ok := v.(map[string]any)
			if !ok {
				errs = append(errs, fmt.Errorf("%s must be a mapping of settings, got %T", key, v))
				return nil
			}
			out := map[string]string{}
			flatten("", m, out)
			return out
		}
		f.Client, f.Producer, f.Consumer = section("client"), section("producer"), section("consumer")
	}
	return f, errors.Join(errs...)
}

// flatten turns nested sections into dotted keys; nulls (OMB's empty
// tlsTrustCertsFilePath:) are left out, as Jackson leaves the field unset.
func flatten(prefix string, m map[string]any, out map[string]string) {
	for k, v := range m {
		switch t := v.(type) {
		case nil:
		case map[string]any:
			flatten(prefix+k+".", t, out)
		default:
			out[prefix+k] = fmt.Sprint(t)
		}
	}
}

// ParseProperties reads a java.util.Properties string as OMB's Kafka driver
// does (Properties.load): one key per logical line, separated from its
// value by '=' or ':' (or white space); '#' and '!' start comments; a line
// ending in an odd number of backslashes goes on on the next line (how a
// long sasl.jaas.config is usually written); backslash escapes (\t, \n,
// \uXXXX, \= ...) are resolved. Values are trimmed, as Kafka's ConfigDef
// trims them.
func ParseProperties(s string) map[string]string {
	out := map[string]string{}
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimLeft(lines[i], " \t\f")
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		for continued(line) && i+1 < len(lines) {
			i++
			line = line[:len(line)-1] + strings.TrimLeft(lines[i], " \t\f")
		}
		if continued(line) {
			line = line[:len(line)-1]
		}
		k, v := splitProperty(line)
		out[unescapeProperty(k)] = strings.TrimSpace(unescapeProperty(v))
	}
	return out
}

// continued: the line ends in an odd number of backslashes.
func continued(line string) bool {
	n := 0
	for i := len(line) - 1; i >= 0 && line[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// splitProperty splits a logical line at the first unescaped '=', ':' or
// white space (then one '=' or ':' after white space belongs to it).
func splitProperty(line string) (key, value string) {
	i := 0
	for ; i < len(line); i++ {
		c := line[i]
		if c == '\\' {
			i++
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			break
		}
	}
	if i >= len(line) {
		return line, ""
	}
	key, rest := line[:i], strings.TrimLeft(line[i:], " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') && (line[i] == ' ' || line[i] == '\t' || line[i] == '\f' || rest[0] == line[i]) {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	return key, rest
}

// unescapeProperty resolves Properties' escapes: \t \n \r \f, \uXXXX, and
// \x for any other x.
func unescapeProperty(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+4 < len(s) {
				if r, err := strconv.ParseUint(s[i+1:i+5], 16, 16); err == nil {
					b.WriteRune(rune(r))
					i += 4
					continue
				}
			}
			b.WriteByte('u')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// Map maps a parsed driver file onto spec.driver for a run of system with
// the effective durability eff (durability.Translate of spec.durability).
// It returns the settings, the keys it dropped and why, or an error naming
// the file's key and the fix.
//
// Map is the cluster's mapping: a file with security keys (Kafka's
// security.protocol, sasl.*, ssl.*; Pulsar's TLS and authentication keys)
// is refused, naming them, with the way a cluster run takes its security
// (spec.cluster.existing.tls and authentication, with Secrets). Local mode
// maps them instead (MapWithSecurity).
func Map(f File, system v1alpha1.System, eff v1alpha1.EffectiveDurability) (*v1alpha1.DriverSpec, []Dropped, error) {
	if f.System == system {
		if err := refuseSecurity(f); err != nil {
			return nil, nil, err
		}
	}
	drv, _, dropped, err := MapWithSecurity(f, system, eff)
	return drv, dropped, err
}

// MapWithSecurity is Map for local mode: the file's security keys are
// mapped (MapSecurity) rather than refused; the returned Security is nil
// for a plaintext, anonymous client.
func MapWithSecurity(f File, system v1alpha1.System, eff v1alpha1.EffectiveDurability) (*v1alpha1.DriverSpec, *Security, []Dropped, error) {
	if f.System != system {
		return nil, nil, nil, fmt.Errorf("the driver file is OMB's %s driver (driverClass %s) but spec.system is %s; give a driver-%s file", f.System, f.DriverClass, system, system)
	}
	sec, secDropped, secErr := MapSecurity(f)
	var drv *v1alpha1.DriverSpec
	var dropped []Dropped
	var err error
	switch system {
	case v1alpha1.SystemKafka:
		drv, dropped, err = mapKafka(f, eff)
	case v1alpha1.SystemPulsar:
		drv, dropped, err = mapPulsar(f, eff)
	default:
		return nil, nil, nil, fmt.Errorf("spec.system %q is neither kafka nor pulsar", system)
	}
	dropped = append(dropped, secDropped...)
	if err := errors.Join(err, secErr); err != nil {
		return nil, nil, dropped, err
	}
	return drv, sec, dropped, nil
}

const fix = "remove it and choose the durability level instead"

func mapKafka(f File, eff v1alpha1.EffectiveDurability) (*v1alpha1.DriverSpec, []Dropped, error) {
	if eff.Kafka == nil {
		return nil, nil, errors.New("the effective durability has no Kafka settings; translate spec.durability for system kafka")
	}
	prodKeys, consKeys := kafka.SupportedKeys()
	out := &v1alpha1.KafkaDriver{}
	var dropped []Dropped
	var errs []error
	drop := func(section, k, why string) { dropped = append(dropped, Dropped{section + ": " + k, why}) }

	if rf := f.ReplicationFactor; rf != nil && *rf != eff.Kafka.ReplicationFactor {
		errs = append(errs, fmt.Errorf("replicationFactor %d disagrees with spec.durability, whose replication factor is %d; set spec.durability.replication.replicas: %d (with ackReplicas and mode) or change replicationFactor to %d",
			*rf, eff.Kafka.ReplicationFactor, *rf, eff.Kafka.ReplicationFactor))
	}

	// A durability key is accepted when it equals what spec.durability sets.
	same := func(section, k, v, want string, set bool) {
		if set && normAcks(k, v) == normAcks(k, want) {
			drop(section, k+"="+v, "set by spec.durability to the same value")
			return
		}
		now := "which does not set it at this level"
		if set {
			now = fmt.Sprintf("which sets %s=%s", k, want)
		}
		errs = append(errs, fmt.Errorf("%s: %s=%s is set by spec.durability (%s); %s", section, k, v, now, fix))
	}

	for _, k := range slices.Sorted(maps.Keys(f.TopicConfig)) {
		v := f.TopicConfig[k]
		if isKafkaTopicDurability(k) {
			want, set := eff.Kafka.Topic[k]
			same("topicConfig", k, v, want, set)
			continue
		}
		put(&out.Topic, k, v)
	}
	apply := func(section string, kv map[string]string, producer, consumer bool) {
		for _, k := range slices.Sorted(maps.Keys(kv)) {
			v := kv[k]
			switch {
			case isSecurityKey("kafka", section, k):
				// MapSecurity's.
				continue
			case k == "bootstrap.servers":
				drop(section, k, "the brokers come from spec.cluster (or the local brokers)")
				continue
			case producer && isKafkaProducerDurability(k):
				want, set := eff.Kafka.Producer[k]
				same(section, k, v, want, set)
				continue
			}
			if producer && k == "max.in.flight.requests.per.connection" && eff.Kafka.Producer[durability.KafkaProducerIdempotence] == "true" && v != "5" {
				// OMB's kafka-exactly-once.yaml asks for 1 to keep order
				// under retries; franz-go's idempotent producer keeps order
				// with its fixed 5 (and refuses any other value).
				drop(section, k+"="+v, "idempotent writes (acks=all from spec.durability) keep 5 requests in flight in franz-go, which still preserves order")
				continue
			}
			used := false
			if producer && slices.Contains(prodKeys, k) {
				put(&out.Producer, k, v)
				used = true
			}
			if consumer && slices.Contains(consKeys, k) {
				put(&out.Consumer, k, v)
				used = true
			}
			if !used {
				drop(section, k+"="+v, "streambench's Kafka client (franz-go) has no equivalent setting")
			}
		}
	}
	// OMB's driver builds producer and consumer properties from commonConfig,
	// then adds producerConfig / consumerConfig over it.
	apply("commonConfig", f.CommonConfig, true, true)
	apply("producerConfig", f.ProducerConfig, true, false)
	apply("consumerConfig", f.ConsumerConfig, false, true)

	if err := errors.Join(errs...); err != nil {
		return nil, dropped, err
	}
	return &v1alpha1.DriverSpec{Kafka: out}, dropped, nil
}

func normAcks(k, v string) string {
	if k == durability.KafkaProducerAcks && v == "-1" {
		return "all"
	}
	return strings.ToLower(strings.TrimSpace(v))
}

func isKafkaTopicDurability(k string) bool {
	return slices.Contains(durability.RefusedKafkaTopicKeys, k)
}

func isKafkaProducerDurability(k string) bool {
	return slices.Contains(durability.RefusedKafkaProducerKeys, k)
}

// OMB's Pulsar keys that name where and how OMB's own driver lays out the
// run; streambench decides these itself.
var pulsarRunKeys = map[string]string{
	"serviceUrl":                       "the brokers come from spec.cluster (or the local brokers)",
	"httpUrl":                          "the admin URL comes from spec.cluster (or the local brokers)",
	"namespacePrefix":                  "streambench creates its own namespace per run",
	"clusterName":                      "streambench creates its own namespace per run",
	"topicType":                        "streambench's topics are persistent",
	"persistence.deduplicationEnabled": "streambench does not change the namespace's deduplication policy",
}

func mapPulsar(f File, eff v1alpha1.EffectiveDurability) (*v1alpha1.DriverSpec, []Dropped, error) {
	if eff.Pulsar == nil {
		return nil, nil, errors.New("the effective durability has no Pulsar settings; translate spec.durability for system pulsar")
	}
	clientKeys, prodKeys, consKeys, unsupported := pulsar.SupportedKeys()
	out := &v1alpha1.PulsarDriver{}
	var dropped []Dropped
	var errs []error
	quorum := map[string]int32{
		"persistence.ensembleSize": eff.Pulsar.EnsembleSize,
		"persistence.writeQuorum":  eff.Pulsar.WriteQuorum,
		"persistence.ackQuorum":    eff.Pulsar.AckQuorum,
	}
	// OMB's names that are the same setting under the Go driver's name.
	renames := map[string]string{
		"producer: pendingQueueSize": "maxPendingMessages",
	}
	section := func(name string, kv map[string]string, keys []string, dst *map[string]string) {
		for _, k := range slices.Sorted(maps.Keys(kv)) {
			v := kv[k]
			key := name + ": " + k
			if want, ok := quorum[k]; ok && name == "client" {
				if v == strconv.Itoa(int(want)) {
					dropped = append(dropped, Dropped{key + "=" + v, "set by spec.durability to the same value"})
				} else {
					errs = append(errs, fmt.Errorf("client.%s=%s is set by spec.durability (which sets %d); %s", k, v, want, fix))
				}
				continue
			}
			if isSecurityKey("pulsar", name, k) {
				// MapSecurity's.
				continue
			}
			if why, ok := pulsarRunKeys[k]; ok && name == "client" {
				dropped = append(dropped, Dropped{key, why})
				continue
			}
			if name == "client" && k == "clientMemoryLimitMB" {
				mb, err := strconv.ParseInt(v, 10, 64)
				if err != nil || mb < 0 {
					errs = append(errs, fmt.Errorf("client.clientMemoryLimitMB must be a whole number of MiB, got %q", v))
					continue
				}
				put(dst, "memoryLimitBytes", strconv.FormatInt(mb<<20, 10))
				continue
			}
			if to, ok := renames[key]; ok {
				put(dst, to, v)
				continue
			}
			if slices.Contains(keys, k) {
				put(dst, k, v)
				continue
			}
			why := "streambench's Pulsar client (pulsar-client-go) has no equivalent setting"
			if w, ok := unsupported[k]; ok {
				why = w
			}
			dropped = append(dropped, Dropped{key + "=" + v, why})
		}
	}
	section("client", f.Client, clientKeys, &out.Client)
	section("producer", f.Producer, prodKeys, &out.Producer)
	section("consumer", f.Consumer, consKeys, &out.Consumer)
	if err := errors.Join(errs...); err != nil {
		return nil, dropped, err
	}
	return &v1alpha1.DriverSpec{Pulsar: out}, dropped, nil
}

// Merge lays spec.driver over the file's settings: a key written in the
// BenchmarkRun wins over the same key from the driver file.
func Merge(file, spec *v1alpha1.DriverSpec) *v1alpha1.DriverSpec {
	if file == nil {
		return spec
	}
	out := file.DeepCopy()
	if spec == nil {
		return out
	}
	if spec.Kafka != nil {
		if out.Kafka == nil {
			out.Kafka = &v1alpha1.KafkaDriver{}
		}
		over(&out.Kafka.Producer, spec.Kafka.Producer)
		over(&out.Kafka.Consumer, spec.Kafka.Consumer)
		over(&out.Kafka.Topic, spec.Kafka.Topic)
	}
	if spec.Pulsar != nil {
		if out.Pulsar == nil {
			out.Pulsar = &v1alpha1.PulsarDriver{}
		}
		over(&out.Pulsar.Client, spec.Pulsar.Client)
		over(&out.Pulsar.Producer, spec.Pulsar.Producer)
		over(&out.Pulsar.Consumer, spec.Pulsar.Consumer)
	}
	return out
}

func over(dst *map[string]string, src map[string]string) {
	for k, v := range src {
		put(dst, k, v)
	}
}

func put(m *map[string]string, k, v string) {
	if *m == nil {
		*m = map[string]string{}
	}
	(*m)[k] = v
}
