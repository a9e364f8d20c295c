package pulsar

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// OMB's Pulsar driver defaults (driver-pulsar/pulsar.yaml), the settings the
// source studies' benchmarks ran with (docs/methodology.md). Overrides use the same Java property names, so
// an OMB driver file's values can be copied as they are.
const (
	defaultConnectionsPerBroker = 8
	// Not OMB's: OMB's driver waits 10 minutes for a lookup or a producer;
	// streambench gives up after 30 s, so an unreachable or misconfigured
	// broker fails the run's setup in seconds. Messages are not bound by
	// it (sendTimeout is).
	defaultOperationTimeout  = 30 * time.Second
	defaultConnectionTimeout = 10 * time.Second

	defaultBatchingMaxPublishDelay = time.Millisecond
	defaultBatchingMaxBytes        = 131072
	// OMB's driver sets batchingMaxMessages(Integer.MAX_VALUE): batches
	// close on bytes or delay only.
	defaultBatchingMaxMessages = math.MaxInt32
	// OMB sets maxPendingMessages 0, "unbounded, bounded by the client's
	// memory limit". The Go client cannot be unbounded (0 means its default
	// of 1000) and allocates the queue per partition up front, so a large
	// fixed bound stands in; the client's memory limit (64 MiB, as the Java
	// client's) still bounds the bytes.
	defaultMaxPendingMessages = 10000

	defaultReceiverQueueSize = 10000
)

// clientSettings, producerSettings and consumerSettings are the translated
// options; pure values so the translation can be table-tested without a broker.
type clientSettings struct {
	ConnectionsPerBroker int
	OperationTimeout     time.Duration
	ConnectionTimeout    time.Duration
	KeepAliveInterval    time.Duration
	MemoryLimitBytes     int64
}

type producerSettings struct {
	BatchingEnabled         bool
	BatchingMaxPublishDelay time.Duration
	BatchingMaxBytes        uint
	BatchingMaxMessages     uint
	BlockIfQueueFull        bool
	MaxPendingMessages      int
	Compression             pulsar.CompressionType
	SendTimeout             time.Duration
	HashingScheme           pulsar.HashingScheme
}

type consumerSettings struct {
	ReceiverQueueSize  int
	SubscriptionType   pulsar.SubscriptionType
	AutoScaledQueue    bool
	AckGroupingMaxTime time.Duration
	AckGroupingSet     bool
}

// setter applies one override value; it returns an error that says what the
// value should look like.
type setter[T any] func(s *T, v string) error

// unsupported are OMB/Java keys the Go client has no equivalent for; they are
// refused with the reason instead of being silently ignored.
var unsupportedClient = map[string]string{
	"ioThreads":            "the Go client uses goroutines, not an I/O thread pool; remove it",
	"listenerThreads":      "the Go client uses goroutines, not listener threads; remove it",
	"statsIntervalSeconds": "the Go client exports Prometheus metrics instead of periodic stats; remove it",
	"serviceUrl":           "the service URL comes from the run's brokers; remove it",
}

var unsupportedProducer = map[string]string{
	"maxPendingMessagesAcrossPartitions": "the Go client bounds pending messages per partition only; use maxPendingMessages",
	"topicName":                          "topics are created by the run; remove it",
	"producerName":                       "producer names must be unique and are chosen by the run; remove it",
}

var unsupportedConsumer = map[string]string{
	"maxTotalReceiverQueueSizeAcrossPartitions": "the Go client has no cross-partition cap (each partition has its own receiverQueueSize), so the Java client's throttling the source studies (docs/methodology.md) warn about cannot happen; remove it",
	"subscriptionInitialPosition":               "benchmark consumers always start at the earliest position (every acknowledged message must be consumed); remove it",
	"subscriptionName":                          "subscriptions are named by the workload; remove it",
}

var clientSetters = map[string]setter[clientSettings]{
	"connectionsPerBroker": func(s *clientSettings, v string) error {
		return positiveInt(v, &s.ConnectionsPerBroker)
	},
	"operationTimeoutMs": func(s *clientSettings, v string) error {
		return millis(v, &s.OperationTimeout)
	},
	"connectionTimeoutMs": func(s *clientSettings, v string) error {
		return millis(v, &s.ConnectionTimeout)
	},
	"keepAliveIntervalSeconds": func(s *clientSettings, v string) error {
		var n int
		if err := positiveInt(v, &n); err != nil {
			return err
		}
		s.KeepAliveInterval = time.Duration(n) * time.Second
		return nil
	},
	"memoryLimitBytes": func(s *clientSettings, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("want a byte count >= 0 (0 = the client's default), got %q", v)
		}
		s.MemoryLimitBytes = n
		return nil
	},
}

var producerSetters = map[string]setter[producerSettings]{
	"batchingEnabled": func(s *producerSettings, v string) error {
		return boolean(v, &s.BatchingEnabled)
	},
	"batchingMaxPublishDelayMs": func(s *producerSettings, v string) error {
		return millis(v, &s.BatchingMaxPublishDelay)
	},
	// The Java builder calls it batchingMaxBytes; OMB's file says the same.
	"batchingMaxBytes": func(s *producerSettings, v string) error {
		return positiveUint(v, &s.BatchingMaxBytes)
	},
	"batchingMaxMessages": func(s *producerSettings, v string) error {
		return positiveUint(v, &s.BatchingMaxMessages)
	},
	"blockIfQueueFull": func(s *producerSettings, v string) error {
		return boolean(v, &s.BlockIfQueueFull)
	},
	"maxPendingMessages": func(s *producerSettings, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("want a count >= 0 (0 = streambench's large default, OMB's 'unbounded'), got %q", v)
		}
		if n == 0 {
			n = defaultMaxPendingMessages
		}
		s.MaxPendingMessages = n
		return nil
	},
	"compressionType": func(s *producerSettings, v string) error {
		switch strings.ToUpper(v) {
		case "NONE":
			s.Compression = pulsar.NoCompression
		case "LZ4":
			s.Compression = pulsar.LZ4
		case "ZLIB":
			s.Compression = pulsar.ZLib
		case "ZSTD":
			s.Compression = pulsar.ZSTD
		default:
			return fmt.Errorf("want NONE, LZ4, ZLIB or ZSTD (the Go client has no SNAPPY), got %q", v)
		}
		return nil
	},
	// Java's 0 means "no timeout"; the Go client's 0 means its 30 s default
	// and a negative value disables it.
	"sendTimeoutMs": func(s *producerSettings, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("want milliseconds >= 0 (0 = no timeout), got %q", v)
		}
		if n == 0 {
			s.SendTimeout = -1
		} else {
			s.SendTimeout = time.Duration(n) * time.Millisecond
		}
		return nil
	},
	"hashingScheme": func(s *producerSettings, v string) error {
		switch v {
		case "JavaStringHash":
			s.HashingScheme = pulsar.JavaStringHash
		case "Murmur3_32Hash":
			s.HashingScheme = pulsar.Murmur3_32Hash
		default:
			return fmt.Errorf("want JavaStringHash or Murmur3_32Hash, got %q", v)
		}
		return nil
	},
}

var consumerSetters = map[string]setter[consumerSettings]{
	"receiverQueueSize": func(s *consumerSettings, v string) error {
		return positiveInt(v, &s.ReceiverQueueSize)
	},
	"subscriptionType": func(s *consumerSettings, v string) error {
		switch v {
		case "Exclusive":
			s.SubscriptionType = pulsar.Exclusive
		case "Shared":
			s.SubscriptionType = pulsar.Shared
		case "Failover":
			s.SubscriptionType = pulsar.Failover
		case "Key_Shared":
			s.SubscriptionType = pulsar.KeyShared
		default:
			return fmt.Errorf("want Exclusive, Shared, Failover or Key_Shared, got %q", v)
		}
		return nil
	},
	"autoScaledReceiverQueueSizeEnabled": func(s *consumerSettings, v string) error {
		return boolean(v, &s.AutoScaledQueue)
	},
	"acknowledgementsGroupTimeMicros": func(s *consumerSettings, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("want microseconds >= 0 (0 = acknowledge at once), got %q", v)
		}
		s.AckGroupingMaxTime = time.Duration(n) * time.Microsecond
		s.AckGroupingSet = true
		return nil
	},
}

func defaultClientSettings() clientSettings {
	return clientSettings{
		ConnectionsPerBroker: defaultConnectionsPerBroker,
		OperationTimeout:     defaultOperationTimeout,
		ConnectionTimeout:    defaultConnectionTimeout,
	}
}

func defaultProducerSettings() producerSettings {
	return producerSettings{
		BatchingEnabled:         true,
		BatchingMaxPublishDelay: defaultBatchingMaxPublishDelay,
		BatchingMaxBytes:        defaultBatchingMaxBytes,
		BatchingMaxMessages:     defaultBatchingMaxMessages,
		BlockIfQueueFull:        true,
		MaxPendingMessages:      defaultMaxPendingMessages,
		Compression:             pulsar.NoCompression,
		HashingScheme:           pulsar.JavaStringHash,
		// OMB's driver sets sendTimeout(0): no timeout, so a stalled
		// broker shows as a long latency tail, not as errors that cut it.
		// The Go client's 0 would mean its 30 s default.
		SendTimeout: -1,
	}
}

func defaultConsumerSettings() consumerSettings {
	return consumerSettings{
		ReceiverQueueSize: defaultReceiverQueueSize,
		SubscriptionType:  pulsar.Failover,
	}
}

// settings is the whole translation of spec.driver.pulsar.
type settings struct {
	Client   clientSettings
	Producer producerSettings
	Consumer consumerSettings
}

// translate applies the overrides over OMB's defaults. Unknown or unsupported
// keys are errors that name the key and list what is supported: a typo must
// not silently change a benchmark.
func translate(o *v1alpha1.DriverSpec) (settings, error) {
	s := settings{Client: defaultClientSettings(), Producer: defaultProducerSettings(), Consumer: defaultConsumerSettings()}
	if o == nil {
		return s, nil
	}
	if o.Kafka != nil {
		return s, fmt.Errorf("spec.driver.kafka is set but the system is pulsar; move the settings to spec.driver.pulsar or remove them")
	}
	if o.Pulsar == nil {
		return s, nil
	}
	var errs []string
	errs = apply("client", o.Pulsar.Client, &s.Client, clientSetters, unsupportedClient, errs)
	errs = apply("producer", o.Pulsar.Producer, &s.Producer, producerSetters, unsupportedProducer, errs)
	errs = apply("consumer", o.Pulsar.Consumer, &s.Consumer, consumerSetters, unsupportedConsumer, errs)
	if len(errs) > 0 {
		return s, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return s, nil
}

func apply[T any](section string, kv map[string]string, s *T, setters map[string]setter[T], unsupported map[string]string, errs []string) []string {
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		field := "spec.driver.pulsar." + section + "." + k
		if why, ok := unsupported[k]; ok {
			errs = append(errs, fmt.Sprintf("%s is not supported: %s", field, why))
			continue
		}
		set, ok := setters[k]
		if !ok {
			errs = append(errs, fmt.Sprintf("%s is not a known setting; supported %s keys: %s", field, section, strings.Join(supportedKeys(setters), ", ")))
			continue
		}
		if err := set(s, strings.TrimSpace(kv[k])); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", field, err))
		}
	}
	return errs
}

func supportedKeys[T any](setters map[string]setter[T]) []string {
	keys := make([]string, 0, len(setters))
	for k := range setters {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func positiveInt(v string, dst *int) error {
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return fmt.Errorf("want a whole number > 0, got %q", v)
	}
	*dst = n
	return nil
}

func positiveUint(v string, dst *uint) error {
	n, err := strconv.ParseUint(v, 10, 0)
	if err != nil || n == 0 {
		return fmt.Errorf("want a whole number > 0, got %q", v)
	}
	*dst = uint(n)
	return nil
}

func millis(v string, dst *time.Duration) error {
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return fmt.Errorf("want milliseconds > 0, got %q", v)
	}
	*dst = time.Duration(n) * time.Millisecond
	return nil
}

func boolean(v string, dst *bool) error {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("want true or false, got %q", v)
	}
	*dst = b
	return nil
}

// Options builders: pure mappings from the translated settings to the client's
// option structs.

func (c clientSettings) options(url string) pulsar.ClientOptions {
	return pulsar.ClientOptions{
		URL:                     url,
		MaxConnectionsPerBroker: c.ConnectionsPerBroker,
		OperationTimeout:        c.OperationTimeout,
		ConnectionTimeout:       c.ConnectionTimeout,
		KeepAliveInterval:       c.KeepAliveInterval,
		MemoryLimitBytes:        c.MemoryLimitBytes,
	}
}

func (p producerSettings) options(topic string) pulsar.ProducerOptions {
	return pulsar.ProducerOptions{
		Topic:                   topic,
		DisableBatching:         !p.BatchingEnabled,
		BatchingMaxPublishDelay: p.BatchingMaxPublishDelay,
		BatchingMaxSize:         p.BatchingMaxBytes,
		BatchingMaxMessages:     p.BatchingMaxMessages,
		DisableBlockIfQueueFull: !p.BlockIfQueueFull,
		MaxPendingMessages:      p.MaxPendingMessages,
		CompressionType:         p.Compression,
		SendTimeout:             p.SendTimeout,
		HashingScheme:           p.HashingScheme,
	}
}

// The source studies' consumer fix (raising the Java client's
// maxTotalReceiverQueueSizeAcrossPartitions so a 100-partition subscription is
// not throttled) needs nothing here: the Go client gives every partition its
// own ReceiverQueueSize and has no cross-partition cap.
func (c consumerSettings) options(topic, subscription string) pulsar.ConsumerOptions {
	o := pulsar.ConsumerOptions{
		Topic:                             topic,
		SubscriptionName:                  subscription,
		Type:                              c.SubscriptionType,
		SubscriptionInitialPosition:       pulsar.SubscriptionPositionEarliest,
		ReceiverQueueSize:                 c.ReceiverQueueSize,
		EnableAutoScaledReceiverQueueSize: c.AutoScaledQueue,
	}
	if c.AckGroupingSet {
		o.AckGroupingOptions = &pulsar.AckGroupingOptions{MaxSize: 1000, MaxTime: c.AckGroupingMaxTime}
	}
	return o
}

// SupportedKeys are the client, producer and consumer setting names this
// driver applies, and the reasons for the Java-only ones it refuses. OMB
// driver files are mapped onto spec.driver with them (internal/ombdriver).
func SupportedKeys() (client, producer, consumer []string, unsupported map[string]string) {
	unsupported = map[string]string{}
	for _, m := range []map[string]string{unsupportedClient, unsupportedProducer, unsupportedConsumer} {
		for k, v := range m {
			unsupported[k] = v
		}
	}
	return supportedKeys(clientSetters), supportedKeys(producerSetters), supportedKeys(consumerSetters), unsupported
}
