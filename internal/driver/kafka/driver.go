// Package kafka is the Kafka driver on franz-go. It applies the effective
// durability exactly (topic replication factor and configs, producer acks)
// and OMB's client defaults, so a streambench run measures what an OMB run
// with the same workload measures.
package kafka

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
)

// TopicPrefix starts every benchmark topic name: sb-<runid>-<i>.
const TopicPrefix = "sb-"

// readyTimeout bounds the waits for created topics to get leaders and for
// deleted topics to leave the metadata.
const readyTimeout = 60 * time.Second

// Driver is the Kafka driver.Driver.
type Driver struct {
	cfg       driver.Config
	seeds     []string
	admin     *kgo.Client
	adm       *kadm.Client
	producer  producerSettings
	consumer  consumerSettings
	topicConf map[string]*string
	security  *ClientSecurity
	// createRetry bounds how long CreateTopics retries a topic refused
	// for want of brokers (0: readyTimeout).
	createRetry time.Duration

	mu        sync.Mutex
	producers map[*producer]struct{}
	consumers map[*consumer]struct{}
}

var (
	_ driver.Driver            = (*Driver)(nil)
	_ driver.SecurityDescriber = (*Driver)(nil)
)

// topicNameChars are what Kafka allows in topic names.
var topicNameChars = regexp.MustCompile(`^[a-zA-Z0-9._-]+$`)

// New validates cfg, translates every setting (so a bad override fails
// before any topic exists) and checks that the brokers answer.
func New(ctx context.Context, cfg driver.Config) (*Driver, error) {
	if cfg.System != v1alpha1.SystemKafka {
		return nil, fmt.Errorf("kafka driver: Config.System is %q; use the %s driver", cfg.System, cfg.System)
	}
	seeds := splitBrokers(cfg.Brokers.BootstrapServers)
	if len(seeds) == 0 {
		return nil, errors.New("kafka driver: brokers.bootstrapServers is empty; set the Kafka bootstrap address (host:port[,host:port])")
	}
	if cfg.RunID == "" || !topicNameChars.MatchString(cfg.RunID) || len(cfg.RunID) > 200 {
		return nil, fmt.Errorf("kafka driver: RunID %q must be 1-200 letters, digits, '.', '_' or '-' (it names the topics %s<runid>-<i>)", cfg.RunID, TopicPrefix)
	}
	k := cfg.Durability.Kafka
	if k == nil {
		return nil, errors.New("kafka driver: Config.Durability.Kafka is nil; translate spec.durability with internal/durability.Translate for system kafka")
	}
	if k.ReplicationFactor < 1 {
		return nil, fmt.Errorf("kafka driver: effective durability replicationFactor %d must be at least 1", k.ReplicationFactor)
	}
	var over v1alpha1.KafkaDriver
	if cfg.Overrides != nil {
		if cfg.Overrides.Pulsar != nil {
			return nil, errors.New("spec.driver.pulsar is set for a kafka run; remove it or use spec.driver.kafka")
		}
		if cfg.Overrides.Kafka != nil {
			over = *cfg.Overrides.Kafka
		}
	}
	ps, err := buildProducerSettings(k.Producer, over.Producer)
	if err != nil {
		return nil, err
	}
	cs, err := buildConsumerSettings(over.Consumer)
	if err != nil {
		return nil, err
	}
	tc, err := buildTopicConfig(k.Topic, over.Topic)
	if err != nil {
		return nil, err
	}
	sec, err := LoadSecurity(cfg.Security)
	if err != nil {
		return nil, fmt.Errorf("kafka driver: %w", err)
	}
	// One connection first, also without security: a listener that wants
	// TLS or SASL is said so in milliseconds, not after ListBrokers' 30 s.
	if err := sec.Check(ctx, seeds); err != nil {
		return nil, fmt.Errorf("kafka driver: %w", err)
	}
	// kadm answers metadata-based calls (ListTopics) from a cache up to
	// MetadataMinAge old (default 5 s); the waits for created and deleted
	// topics need fresh answers.
	admin, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seeds...), kgo.MetadataMinAge(250 * time.Millisecond)}, sec.Opts()...)...)
	if err != nil {
		return nil, fmt.Errorf("kafka driver: %w", err)
	}
	adm := kadm.NewClient(admin)
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := adm.ListBrokers(pctx); err != nil {
		admin.Close()
		return nil, fmt.Errorf("kafka driver: brokers %s do not answer: %w", cfg.Brokers.BootstrapServers, err)
	}
	return &Driver{
		cfg: cfg, seeds: seeds, admin: admin, adm: adm,
		producer: ps, consumer: cs, topicConf: tc, security: sec,
		producers: map[*producer]struct{}{}, consumers: map[*consumer]struct{}{},
	}, nil
}

func splitBrokers(s string) []string {
	var out []string
	for _, b := range strings.Split(s, ",") {
		if b = strings.TrimSpace(b); b != "" {
			out = append(out, b)
		}
	}
	return out
}

// TopicName is sb-<runid>-<i>: runs never share topics, and DeleteTopics
// finds every topic of the run by its prefix.
func (d *Driver) TopicName(i int) string { return RunTopic(d.cfg.RunID, i) }

func (d *Driver) topicPrefix() string { return TopicPrefix + d.cfg.RunID + "-" }

// CreateTopics creates the topics with the durability's replication factor
// and topic configs, and waits until every partition has a leader, so the
// first sends do not race the leader elections.
func (d *Driver) CreateTopics(ctx context.Context, topics []driver.Topic) error {
	for _, t := range topics {
		if t.Partitions < 1 {
			return fmt.Errorf("topic %s: partitions %d must be at least 1", t.Name, t.Partitions)
		}
		if !strings.HasPrefix(t.Name, d.topicPrefix()) {
			return fmt.Errorf("topic %q is not this run's; name topics with TopicName (%s<i>)", t.Name, d.topicPrefix())
		}
	}
	rf := int16(d.cfg.Durability.Kafka.ReplicationFactor)
	for _, t := range topics {
		if err := d.createTopic(ctx, t, rf); err != nil {
			return err
		}
	}
	return d.waitTopics(ctx, topics)
}

// createTopic creates one topic. While fewer brokers are available than
// the replication factor (INVALID_REPLICATION_FACTOR) it tries again, for
// up to readyTimeout: a broker that is still registering, or fenced by
// the KRaft controller, is back within seconds (a managed one-broker Kafka
// that Strimzi had reported Ready refused a replication factor of 1 so in
// CI, on a busy machine). A replication factor above the cluster's size
// fails the same way, only later, and says so.
func (d *Driver) createTopic(ctx context.Context, t driver.Topic, rf int16) error {
	start := time.Now()
	bound := d.createRetry
	if bound == 0 {
		bound = readyTimeout
	}
	for {
		resp, err := d.adm.CreateTopic(ctx, t.Partitions, rf, d.topicConf, t.Name)
		if err == nil {
			err = resp.Err
		}
		if err == nil {
			return nil
		}
		if errors.Is(err, kerr.InvalidReplicationFactor) && time.Since(start) < bound {
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
				continue
			}
		}
		msg := ""
		if resp.ErrMessage != "" {
			msg = " (" + resp.ErrMessage + ")"
		}
		if errors.Is(err, kerr.InvalidReplicationFactor) {
			msg += fmt.Sprintf("; fewer brokers than %d were available for %s", rf, time.Since(start).Round(time.Second))
		}
		return fmt.Errorf("creating topic %s with %d partitions, replication factor %d and config %v: %w%s", t.Name, t.Partitions, rf, printable(d.topicConf), err, msg)
	}
}

// waitTopics waits until every broker's metadata has every partition with a
// leader. Asking one broker is not enough: clients ask any broker, and one
// that has not caught up answers UNKNOWN_TOPIC_OR_PARTITION, which kgo
// retries only a few times before failing the sends.
func (d *Driver) waitTopics(ctx context.Context, topics []driver.Topic) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	for {
		missing := d.topicsNotReady(ctx, topics)
		if missing == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("created topics not ready within %s: %s", readyTimeout, missing)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// brokerAnswer is one broker's answer to a metadata request.
type brokerAnswer struct {
	id   int32
	resp *kmsg.MetadataResponse
}

// askEachBroker sends req to every broker itself, past the client's
// metadata cache, and returns their answers in the brokers' order.
func (d *Driver) askEachBroker(ctx context.Context, req *kmsg.MetadataRequest) ([]brokerAnswer, error) {
	brokers, err := d.adm.ListBrokers(ctx)
	if err != nil {
		return nil, err
	}
	answers := make([]brokerAnswer, 0, len(brokers))
	for _, b := range brokers {
		resp, err := req.RequestWith(ctx, d.admin.Broker(int(b.NodeID)))
		if err != nil {
			return nil, fmt.Errorf("broker %d: %w", b.NodeID, err)
		}
		answers = append(answers, brokerAnswer{id: b.NodeID, resp: resp})
	}
	return answers, nil
}

// topicsNotReady says what is missing, or "" when all brokers agree.
func (d *Driver) topicsNotReady(ctx context.Context, topics []driver.Topic) string {
	req := kmsg.NewPtrMetadataRequest()
	for _, t := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t.Name)
		req.Topics = append(req.Topics, rt)
	}
	answers, err := d.askEachBroker(ctx, req)
	if err != nil {
		return err.Error()
	}
	for _, a := range answers {
		for i, t := range a.resp.Topics {
			if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
				return fmt.Sprintf("broker %d: topic %s: %v", a.id, topics[i].Name, err)
			}
			if int32(len(t.Partitions)) != topics[i].Partitions {
				return fmt.Sprintf("broker %d: topic %s has %d of %d partitions", a.id, topics[i].Name, len(t.Partitions), topics[i].Partitions)
			}
			for _, p := range t.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil || p.Leader < 0 {
					return fmt.Sprintf("broker %d: topic %s partition %d has no leader yet (%v)", a.id, topics[i].Name, p.Partition, err)
				}
			}
		}
	}
	return ""
}

// DeleteTopics deletes every topic named sb-<runid>-*, also ones an earlier
// attempt of the same run left, and waits until the metadata no longer
// lists them.
func (d *Driver) DeleteTopics(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	for {
		names, err := d.runTopics(ctx)
		if err != nil {
			return fmt.Errorf("listing topics of run %s: %w", d.cfg.RunID, err)
		}
		if len(names) == 0 {
			return nil
		}
		resps, err := d.adm.DeleteTopics(ctx, names...)
		if err != nil {
			return fmt.Errorf("deleting topics %v: %w", names, err)
		}
		for _, r := range resps.Sorted() {
			// Already gone (a second DeleteTopics, or the broker's metadata
			// lagging) is what we want.
			if r.Err != nil && !strings.Contains(r.Err.Error(), "UNKNOWN_TOPIC") {
				return fmt.Errorf("deleting topic %s: %w", r.Topic, r.Err)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("topics %v still listed %s after deleting them", names, readyTimeout)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// runTopics lists every topic named after the run that any broker lists,
// asking each broker afresh: kadm's listing answers from the client's
// metadata cache (up to MetadataMinAge old) and from one broker, so right
// after a creation (a run stopped while it created its topics) it may miss
// the newest topic, and right after a deletion it may still show a topic
// that one broker has dropped and another not yet.
func (d *Driver) runTopics(ctx context.Context) ([]string, error) {
	answers, err := d.askEachBroker(ctx, kmsg.NewPtrMetadataRequest()) // no topics named: all of them
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, a := range answers {
		for _, t := range a.resp.Topics {
			if t.Topic != nil && strings.HasPrefix(*t.Topic, d.topicPrefix()) {
				seen[*t.Topic] = true
			}
		}
	}
	names := slices.Sorted(maps.Keys(seen))
	return names, nil
}

// CreateProducer creates one kgo client per producer. OMB creates one
// KafkaProducer per producer, each with its own record accumulator,
// connections and in-flight window; sharing a client would merge the
// producers' batches and in-flight requests, so a "4 producers" workload
// would behave like one producer.
func (d *Driver) CreateProducer(ctx context.Context, topic string) (driver.Producer, error) {
	cl, err := kgo.NewClient(d.ProducerOpts(topic)...)
	if err != nil {
		return nil, fmt.Errorf("creating producer for %s: %w", topic, err)
	}
	p := &producer{cl: cl, topic: topic, d: d}
	p.promise = p.done
	d.mu.Lock()
	d.producers[p] = struct{}{}
	d.mu.Unlock()
	return p, nil
}

// ProducerOpts are the options of a producer's kgo client on topic: the
// brokers, the translated producer settings and the security. Exported for
// hack/floor, which sends through a bare kgo client with exactly these.
func (d *Driver) ProducerOpts(topic string) []kgo.Opt {
	return append(append([]kgo.Opt{kgo.SeedBrokers(d.seeds...), kgo.DefaultProduceTopic(topic)}, d.producer.opts()...), d.security.Opts()...)
}

// ConsumerOpts are the options of a consumer's kgo client: group member of
// group on topic from the earliest offset, committing marked offsets only
// (see consumer), with the translated consumer settings and the security.
// Exported for hack/floor, as ProducerOpts.
func (d *Driver) ConsumerOpts(topic, group string) []kgo.Opt {
	opts := append([]kgo.Opt{
		kgo.SeedBrokers(d.seeds...),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.AutoCommitMarks(),
	}, d.consumer.opts()...)
	return append(opts, d.security.Opts()...)
}

// CreateConsumer joins the consumer group named after the subscription (as
// OMB does), starting at the earliest offset when the group has none.
func (d *Driver) CreateConsumer(ctx context.Context, topic, subscription string, cb driver.ConsumerCallback) (driver.Consumer, error) {
	if subscription == "" {
		return nil, errors.New("kafka driver: subscription (the consumer group id) must not be empty")
	}
	if cb == nil {
		return nil, errors.New("kafka driver: consumer callback must not be nil")
	}
	c, err := newConsumer(d, topic, subscription, cb)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.consumers[c] = struct{}{}
	d.mu.Unlock()
	return c, nil
}

// SecurityInfo is the security the driver's clients use, with the TLS
// version they negotiated.
func (d *Driver) SecurityInfo() v1alpha1.SecurityInfo { return d.security.Info() }

// Close closes producers and consumers still open, then the admin client.
func (d *Driver) Close() error {
	d.mu.Lock()
	ps := make([]*producer, 0, len(d.producers))
	for p := range d.producers {
		ps = append(ps, p)
	}
	cs := make([]*consumer, 0, len(d.consumers))
	for c := range d.consumers {
		cs = append(cs, c)
	}
	d.mu.Unlock()
	var errs []error
	for _, p := range ps {
		errs = append(errs, p.Close())
	}
	for _, c := range cs {
		errs = append(errs, c.Close())
	}
	d.admin.Close()
	return errors.Join(errs...)
}

func (d *Driver) forget(p *producer, c *consumer) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.producers, p)
	delete(d.consumers, c)
}

func printable(m map[string]*string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = *v
	}
	return out
}
