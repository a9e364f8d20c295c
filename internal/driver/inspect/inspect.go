// Package inspect reads the durability settings of an existing cluster,
// so a run against brokers streambench did not deploy reports what those
// brokers really do instead of what the translation assumed: Kafka through
// DescribeConfigs of every broker and of the run's topics, Pulsar through
// its admin REST API (the run namespace's persistence policy, the broker's
// runtime configuration and version). internal/durability turns what it
// reads into the level in effect (ObserveKafka, ObservePulsar).
//
// It runs in the coordinator, after the topics exist and before the load:
// the coordinator reaches the brokers (the controller may not), and the
// result travels with the run's results into status.durability.
package inspect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/driver/kafka"
	"github.com/streambench/streambench-operator/internal/driver/pulsar"
	"github.com/streambench/streambench-operator/internal/durability"
)

// Existing reads the cluster of cfg and returns the durability in effect for
// a run that asked for asked, on the given topics (Kafka topic names, or
// Pulsar topic names of the run's namespace).
// sec is how the clients reach a secured cluster (nil: plaintext,
// anonymous); the read uses the run's own credentials, so it sees what the
// run's principal may see.
func Existing(ctx context.Context, system v1alpha1.System, brokers v1alpha1.BrokerEndpoints, sec *driver.Security, asked v1alpha1.EffectiveDurability, topics []string) (v1alpha1.EffectiveDurability, error) {
	switch system {
	case v1alpha1.SystemKafka:
		o, err := Kafka(ctx, brokers.BootstrapServers, sec, topics)
		if err != nil {
			return asked, err
		}
		return durability.ObserveKafka(asked, o), nil
	case v1alpha1.SystemPulsar:
		if len(topics) == 0 {
			return asked, errors.New("inspect: no Pulsar topic, so no namespace to read")
		}
		ns, err := NamespaceOf(topics[0])
		if err != nil {
			return asked, err
		}
		o, err := Pulsar(ctx, brokers.AdminURL, sec, ns)
		if err != nil {
			return asked, err
		}
		return durability.ObservePulsar(asked, o), nil
	}
	return asked, fmt.Errorf("inspect: system %q is not kafka or pulsar", system)
}

// Kafka reads the durability keys of every broker and of topics.
func Kafka(ctx context.Context, bootstrap string, sec *driver.Security, topics []string) (durability.KafkaObservation, error) {
	o := durability.KafkaObservation{Brokers: map[int32]map[string]durability.Setting{}, Topics: map[string]map[string]durability.Setting{}, Replicas: map[string]int{}}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cl, rcs, err := brokerConfigs(ctx, bootstrap, sec)
	if err != nil {
		return o, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for _, rc := range rcs {
		var id int32
		if _, err := fmt.Sscan(rc.Name, &id); err != nil {
			return o, fmt.Errorf("inspect: broker resource name %q is not a node id", rc.Name)
		}
		o.Brokers[id] = pick(rc.Configs, durability.KafkaBrokerKeys())
	}
	if len(topics) == 0 {
		return o, nil
	}
	tcs, err := describeTopics(ctx, adm, topics)
	if err != nil {
		return o, err
	}
	for _, rc := range tcs {
		o.Topics[rc.Name] = pick(rc.Configs, durability.KafkaTopicKeys())
	}
	details, err := listTopics(ctx, adm, topics)
	if err != nil {
		return o, err
	}
	for name, d := range details {
		n := -1
		for _, p := range d.Partitions {
			if n < 0 || len(p.Replicas) < n {
				n = len(p.Replicas)
			}
		}
		o.Replicas[name] = max(n, 0)
	}
	return o, nil
}

// brokerConfigs is DescribeConfigs of every broker of the cluster at
// bootstrap, each answered without an error, and the client that asked
// (the caller closes it).
func brokerConfigs(ctx context.Context, bootstrap string, sec *driver.Security) (*kgo.Client, kadm.ResourceConfigs, error) {
	opts, _, err := kafka.ClientOpts(sec)
	if err != nil {
		return nil, nil, fmt.Errorf("inspect: %w", err)
	}
	cl, err := kgo.NewClient(append(opts, kgo.SeedBrokers(strings.Split(bootstrap, ",")...))...)
	if err != nil {
		return nil, nil, err
	}
	adm := kadm.NewClient(cl)
	bs, err := adm.ListBrokers(ctx)
	if err != nil {
		cl.Close()
		return nil, nil, fmt.Errorf("inspect: listing the Kafka brokers at %s: %w", bootstrap, err)
	}
	rcs, err := adm.DescribeBrokerConfigs(ctx, bs.NodeIDs()...)
	if err != nil {
		cl.Close()
		return nil, nil, fmt.Errorf("inspect: DescribeConfigs of the Kafka brokers %v: %w (the principal needs DESCRIBE_CONFIGS on the cluster)", bs.NodeIDs(), err)
	}
	for _, rc := range rcs {
		if rc.Err != nil {
			cl.Close()
			return nil, nil, fmt.Errorf("inspect: DescribeConfigs of broker %s: %w", rc.Name, rc.Err)
		}
	}
	return cl, rcs, nil
}

// topicsSettle bounds how long a read of topics just created waits for
// them to be known to the broker it asks: a topic's metadata reaches every
// broker a moment after CreateTopics answers, and the coordinator reads the
// settings right after creating the run's topics. DescribeConfigs and
// Metadata may go to different brokers, so each waits on its own (CI once
// failed on a Metadata answer of UNKNOWN_TOPIC_OR_PARTITION right after a
// DescribeConfigs had found the topic).
const topicsSettle = 15 * time.Second

// describeTopics is DescribeConfigs of topics, asked again while a broker
// answers UNKNOWN_TOPIC_OR_PARTITION for a topic that was just created.
func describeTopics(ctx context.Context, adm *kadm.Client, topics []string) (tcs kadm.ResourceConfigs, err error) {
	err = untilKnown(ctx, func() (unknown, failed error) {
		tcs, err = adm.DescribeTopicConfigs(ctx, topics...)
		if err != nil {
			return nil, fmt.Errorf("inspect: DescribeConfigs of topics %v: %w", topics, err)
		}
		for _, rc := range tcs {
			switch {
			case errors.Is(rc.Err, kerr.UnknownTopicOrPartition):
				unknown = fmt.Errorf("inspect: DescribeConfigs of topic %s: %w (still unknown %s after its creation)", rc.Name, rc.Err, topicsSettle)
			case rc.Err != nil:
				return nil, fmt.Errorf("inspect: DescribeConfigs of topic %s: %w", rc.Name, rc.Err)
			}
		}
		return unknown, nil
	})
	return tcs, err
}

// listTopics is the metadata of topics, asked again while a broker answers
// UNKNOWN_TOPIC_OR_PARTITION for a topic that was just created.
func listTopics(ctx context.Context, adm *kadm.Client, topics []string) (details kadm.TopicDetails, err error) {
	err = untilKnown(ctx, func() (unknown, failed error) {
		details, err = adm.ListTopics(ctx, topics...)
		if err != nil {
			return nil, fmt.Errorf("inspect: metadata of topics %v: %w", topics, err)
		}
		for _, name := range topics {
			d, ok := details[name]
			switch {
			case !ok || errors.Is(d.Err, kerr.UnknownTopicOrPartition):
				unknown = fmt.Errorf("inspect: metadata of topic %s: %w (still unknown %s after its creation)", name, kerr.UnknownTopicOrPartition, topicsSettle)
			case d.Err != nil:
				return nil, fmt.Errorf("inspect: metadata of topic %s: %w", name, d.Err)
			}
		}
		return unknown, nil
	})
	return details, err
}

// untilKnown calls read until it reports neither an unknown topic nor a
// failure, waiting 100 ms, then twice as long each time up to 1 s, for at
// most topicsSettle; a failure ends it at once.
func untilKnown(ctx context.Context, read func() (unknown, failed error)) error {
	deadline := time.Now().Add(topicsSettle)
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		unknown, failed := read()
		if failed != nil {
			return failed
		}
		if unknown == nil {
			return nil
		}
		if time.Now().Add(wait).After(deadline) {
			return unknown
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}

// pick keeps keys of configs, with Kafka's source named in words.
func pick(configs []kadm.Config, keys []string) map[string]durability.Setting {
	want := map[string]bool{}
	for _, k := range keys {
		want[k] = true
	}
	out := map[string]durability.Setting{}
	for _, c := range configs {
		if want[c.Key] && c.Value != nil {
			out[c.Key] = durability.Setting{Value: *c.Value, Source: source(c.Source)}
		}
	}
	return out
}

func source(s kmsg.ConfigSource) string {
	switch s {
	case kmsg.ConfigSourceDynamicTopicConfig:
		return "topic override"
	case kmsg.ConfigSourceDynamicBrokerConfig:
		return "dynamic broker config"
	case kmsg.ConfigSourceDynamicDefaultBrokerConfig:
		return "dynamic cluster-wide broker default"
	case kmsg.ConfigSourceStaticBrokerConfig:
		return "static broker config"
	case kmsg.ConfigSourceDefaultConfig:
		return "Kafka's default"
	}
	return s.String()
}

// NamespaceOf is the tenant/namespace of a Pulsar topic name
// (persistent://tenant/ns/topic or tenant/ns/topic).
func NamespaceOf(topic string) (string, error) {
	t := topic
	if i := strings.Index(t, "://"); i >= 0 {
		t = t[i+3:]
	}
	parts := strings.Split(t, "/")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" {
		return "", fmt.Errorf("inspect: %q is not a Pulsar topic name of the form persistent://tenant/namespace/topic", topic)
	}
	return parts[0] + "/" + parts[1], nil
}

// Pulsar reads the namespace's persistence policy, the broker's runtime
// configuration and its version through the admin REST API at adminURL.
func Pulsar(ctx context.Context, adminURL string, sec *driver.Security, namespace string) (durability.PulsarObservation, error) {
	var o durability.PulsarObservation
	hc, authorize, err := pulsar.AdminHTTP(sec)
	if err != nil {
		return o, fmt.Errorf("inspect: %w", err)
	}
	c := &admin{Client: hc, authorize: authorize}
	base := strings.TrimRight(adminURL, "/")
	var p struct {
		EnsembleSize int32 `json:"bookkeeperEnsemble"`
		WriteQuorum  int32 `json:"bookkeeperWriteQuorum"`
		AckQuorum    int32 `json:"bookkeeperAckQuorum"`
	}
	// An unset policy answers 204 or an empty body: the broker defaults apply.
	body, err := get(ctx, c, base+"/admin/v2/namespaces/"+namespace+"/persistence")
	if err != nil {
		return o, err
	}
	if s := strings.TrimSpace(string(body)); s != "" && s != "null" {
		if err := json.Unmarshal(body, &p); err != nil {
			return o, fmt.Errorf("inspect: persistence policy of %s: %w (%s)", namespace, err, s)
		}
		o.Persistence = &durability.Quorums{Ensemble: p.EnsembleSize, Write: p.WriteQuorum, Ack: p.AckQuorum}
	}
	body, err = get(ctx, c, base+"/admin/v2/brokers/configuration/runtime")
	if err != nil {
		return o, err
	}
	var runtime map[string]string
	if err := json.Unmarshal(body, &runtime); err != nil {
		return o, fmt.Errorf("inspect: broker runtime configuration: %w", err)
	}
	o.Broker = map[string]string{}
	for _, k := range durability.PulsarBrokerKeys() {
		if v, ok := runtime[k]; ok {
			o.Broker[k] = v
		}
	}
	body, err = get(ctx, c, base+"/admin/v2/brokers/version")
	if err != nil {
		return o, err
	}
	o.Version = strings.Trim(strings.TrimSpace(string(body)), `"`)
	return o, nil
}

// admin is an HTTP client of the admin API with the run's TLS and
// credentials.
type admin struct {
	*http.Client
	authorize func(*http.Request) error
}

func get(ctx context.Context, c *admin, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	if c.authorize != nil {
		if err := c.authorize(req); err != nil {
			return nil, fmt.Errorf("inspect: GET %s: %w", url, err)
		}
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("inspect: GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusNoContent {
		return nil, nil
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("inspect: GET %s: %s %s (the admin role needs to read broker configuration and namespace policies)", url, resp.Status, strings.TrimSpace(string(b)))
	}
	return b, nil
}
