package kafka

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/streambench/streambench-operator/internal/durability"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Kafka property names the durability translation owns. Overrides may not
// set them: a run's reported durability must be what the brokers really do.
var (
	durabilityProducerKeys = durability.RefusedKafkaProducerKeys
	durabilityTopicKeys    = durability.RefusedKafkaTopicKeys
)

// producerSettings are a producer's settings under their Kafka names'
// meaning, before they become kgo options.
type producerSettings struct {
	Acks       kgo.Acks
	Idempotent bool
	Linger     time.Duration
	// BatchMaxBytes is batch.size. Java's batch.size is a target and
	// kgo's ProducerBatchMaxBytes a cap; both close a batch at that size.
	BatchMaxBytes int32
	Compression   kgo.CompressionCodec
	// MaxInFlight is max.in.flight.requests.per.connection.
	MaxInFlight int
	// BufferMemory is buffer.memory: bytes queued before Send blocks.
	BufferMemory    int
	DeliveryTimeout time.Duration
	RequestTimeout  time.Duration
	// Retries is -1 when unset (kgo's default: retry until the delivery
	// timeout, as Java's retries=MAX_INT).
	Retries  int
	ClientID string
	// MetadataBackoff is retry.backoff.max.ms (metadataBackoff).
	MetadataBackoff time.Duration
}

// javaMetadataBackoff is the Java clients' retry.backoff.max.ms (KIP-580,
// Kafka 3.7+): after a retriable error (a leader gone, its connection
// refused) a Java client asks for new metadata after retry.backoff.ms
// (100 ms), backing off to at most this. kgo waits MetadataMinAge between
// metadata requests, 5 s by default, so a producer kept writing to a dead
// leader up to 5 s after the controller had elected another: a leader
// kill's writes stopped 20.3 s with broker.session.timeout.ms at 16 s
// (TestRunKafkaKillLeader), 4 s longer than a Java client would have
// waited. MetadataMinAge at this value is what a Java client does under
// a lasting failure; a healthy run asks for metadata as seldom as before
// (MetadataMaxAge, 5 min).
const javaMetadataBackoff = time.Second

// defaultProducerSettings are OMB's Kafka driver settings (driver-kafka/
// kafka-throughput.yaml: linger.ms=1, batch.size=1048576,
// request.timeout.ms=1200000) over the Java client's defaults where kgo's
// differ, so a run measures what an OMB run measures. Acks come from the
// durability only.
func defaultProducerSettings() producerSettings {
	return producerSettings{
		Linger:        1 * time.Millisecond,
		BatchMaxBytes: 1048576,
		// kgo compresses with snappy by default; the Java client (and so
		// OMB) sends uncompressed unless compression.type is set.
		Compression: kgo.NoCompression(),
		// Java allows 5 in-flight requests per connection; kgo allows 1
		// when idempotence is off (acks=1), which would make async
		// replication look slower than it is.
		MaxInFlight: 5,
		// Java's buffer.memory: Send blocks when 32 MiB are queued
		// (OMB's blockIfQueueFull), not after kgo's 50,000 records.
		BufferMemory: 33554432,
		// OMB waits 20 minutes for a produce request: a stalled broker
		// shows as a long latency tail, not as errors that cut it. The
		// delivery timeout is then the Java client's when it is not set:
		// at least linger.ms + request.timeout.ms (deliveryTimeout).
		RequestTimeout:  1200 * time.Second,
		Retries:         -1,
		MetadataBackoff: javaMetadataBackoff,
	}
}

// javaDeliveryTimeout is the Java producer's delivery.timeout.ms when it is
// not set: its 120 s default, raised to linger.ms + request.timeout.ms,
// which it must not be below.
func javaDeliveryTimeout(s producerSettings) time.Duration {
	return max(120*time.Second, s.Linger+s.RequestTimeout)
}

type setter[S any] func(s *S, v string) error

var producerKeys = map[string]setter[producerSettings]{
	"linger.ms": func(s *producerSettings, v string) error {
		return setDuration(&s.Linger, v, 0)
	},
	"batch.size": func(s *producerSettings, v string) error {
		// kgo refuses batches under 512 bytes or over 1 GiB.
		n, err := parseInt(v, 512, 1<<30)
		s.BatchMaxBytes = int32(n)
		return err
	},
	"compression.type": func(s *producerSettings, v string) error {
		c, ok := compressionCodecs[v]
		if !ok {
			return fmt.Errorf("%q is not a compression type; use one of %s", v, strings.Join(slices.Sorted(maps.Keys(compressionCodecs)), ", "))
		}
		s.Compression = c
		return nil
	},
	"max.in.flight.requests.per.connection": func(s *producerSettings, v string) error {
		n, err := parseInt(v, 1, math.MaxInt32)
		s.MaxInFlight = n
		return err
	},
	"buffer.memory": func(s *producerSettings, v string) error {
		n, err := parseInt(v, 1, math.MaxInt)
		s.BufferMemory = n
		return err
	},
	"delivery.timeout.ms": func(s *producerSettings, v string) error {
		return setDuration(&s.DeliveryTimeout, v, 1)
	},
	"request.timeout.ms": func(s *producerSettings, v string) error {
		return setDuration(&s.RequestTimeout, v, 1)
	},
	"retries": func(s *producerSettings, v string) error {
		n, err := parseInt(v, 0, math.MaxInt32)
		s.Retries = n
		return err
	},
	"client.id": func(s *producerSettings, v string) error {
		s.ClientID = v
		return nil
	},
	"retry.backoff.max.ms": func(s *producerSettings, v string) error {
		return setDuration(&s.MetadataBackoff, v, 1)
	},
}

var compressionCodecs = map[string]kgo.CompressionCodec{
	"none":   kgo.NoCompression(),
	"gzip":   kgo.GzipCompression(),
	"snappy": kgo.SnappyCompression(),
	"lz4":    kgo.Lz4Compression(),
	"zstd":   kgo.ZstdCompression(),
}

// buildProducerSettings applies the spec's overrides to OMB's defaults, then
// the durability's acks and idempotence, which always win.
func buildProducerSettings(durability, overrides map[string]string) (producerSettings, error) {
	s := defaultProducerSettings()
	for _, k := range slices.Sorted(maps.Keys(overrides)) {
		if contains(durabilityProducerKeys, k) {
			return s, fmt.Errorf("spec.driver.kafka.producer[%q] is set by spec.durability; remove it and choose the durability level instead", k)
		}
		set, ok := producerKeys[k]
		if !ok {
			return s, fmt.Errorf("spec.driver.kafka.producer[%q]: unsupported; supported keys are %s", k, strings.Join(slices.Sorted(maps.Keys(producerKeys)), ", "))
		}
		if err := set(&s, overrides[k]); err != nil {
			return s, fmt.Errorf("spec.driver.kafka.producer[%q]: %w", k, err)
		}
	}
	for k := range durability {
		if !contains(durabilityProducerKeys, k) {
			return s, fmt.Errorf("effective durability producer[%q] is not a key the Kafka driver applies (%s); the durability translation and the driver disagree", k, strings.Join(durabilityProducerKeys, ", "))
		}
	}
	switch acks := durability["acks"]; acks {
	case "all", "-1":
		s.Acks = kgo.AllISRAcks()
	case "1":
		s.Acks = kgo.LeaderAck()
	case "0":
		s.Acks = kgo.NoAck()
	case "":
		return s, fmt.Errorf("effective durability producer[\"acks\"] is missing; translate spec.durability with internal/durability.Translate")
	default:
		return s, fmt.Errorf("effective durability producer[\"acks\"] = %q: want all, 1 or 0", acks)
	}
	// Like the Java client: idempotent by default exactly when acks=all.
	s.Idempotent = s.Acks == kgo.AllISRAcks()
	if v, ok := durability["enable.idempotence"]; ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return s, fmt.Errorf("effective durability producer[\"enable.idempotence\"] = %q: want true or false", v)
		}
		s.Idempotent = b
	}
	if s.Idempotent && s.Acks != kgo.AllISRAcks() {
		return s, fmt.Errorf("effective durability sets enable.idempotence=true with acks=%s; Kafka clients require acks=all for idempotent writes", durability["acks"])
	}
	if _, set := overrides["delivery.timeout.ms"]; !set {
		s.DeliveryTimeout = javaDeliveryTimeout(s)
	} else if s.DeliveryTimeout < s.Linger+s.RequestTimeout {
		return s, fmt.Errorf("spec.driver.kafka.producer[\"delivery.timeout.ms\"] (%d) is below linger.ms + request.timeout.ms (%d + %d), which the Java client refuses too; raise it or remove it", s.DeliveryTimeout.Milliseconds(), s.Linger.Milliseconds(), s.RequestTimeout.Milliseconds())
	}
	// kgo pins idempotent producers to 5 requests in flight per broker and
	// refuses the option, so any other value would be silently untrue.
	if _, set := overrides["max.in.flight.requests.per.connection"]; set && s.Idempotent && s.MaxInFlight != 5 {
		return s, fmt.Errorf("spec.driver.kafka.producer[\"max.in.flight.requests.per.connection\"] (%d): idempotent writes (acks=all from spec.durability) always keep 5 requests in flight per broker in franz-go; remove the key or use async replication", s.MaxInFlight)
	}
	return s, nil
}

// opts are the kgo options of the settings.
func (s producerSettings) opts() []kgo.Opt {
	o := []kgo.Opt{
		kgo.RequiredAcks(s.Acks),
		kgo.ProducerLinger(s.Linger),
		kgo.ProducerBatchMaxBytes(s.BatchMaxBytes),
		kgo.ProducerBatchCompression(s.Compression),
		kgo.MaxBufferedBytes(s.BufferMemory),
		// Java bounds the queue by bytes only; the byte bound decides
		// when Send blocks, so the record bound is set out of its way.
		kgo.MaxBufferedRecords(math.MaxInt32),
		kgo.RecordDeliveryTimeout(s.DeliveryTimeout),
		kgo.ProduceRequestTimeout(s.RequestTimeout),
		// The Java client's built-in partitioner (KIP-794) moves a keyless
		// producer to another partition after batch.size bytes; kgo's
		// default does so after 64 KiB, which with OMB's 1 MiB batches
		// makes 16 times as many, smaller, batches.
		kgo.RecordPartitioner(kgo.UniformBytesPartitioner(int(s.BatchMaxBytes), true, true, nil)),
		kgo.MetadataMinAge(s.MetadataBackoff),
	}
	if !s.Idempotent {
		// kgo refuses acks other than all with idempotent writes on.
		o = append(o, kgo.DisableIdempotentWrite(), kgo.MaxProduceRequestsInflightPerBroker(s.MaxInFlight))
	}
	if s.Retries >= 0 {
		o = append(o, kgo.RecordRetries(s.Retries))
	}
	if s.ClientID != "" {
		o = append(o, kgo.ClientID(s.ClientID))
	}
	return o
}

// consumerSettings are a consumer's settings under their Kafka names'
// meaning.
type consumerSettings struct {
	MaxPartitionFetchBytes int32
	FetchMaxBytes          int32
	FetchMinBytes          int32
	FetchMaxWait           time.Duration
	SessionTimeout         time.Duration
	HeartbeatInterval      time.Duration
	ClientID               string
	// MetadataBackoff is retry.backoff.max.ms, as the producer's.
	MetadataBackoff time.Duration
}

// defaultConsumerSettings are OMB's (max.partition.fetch.bytes=10485760)
// over the Java client's defaults where kgo's differ.
func defaultConsumerSettings() consumerSettings {
	return consumerSettings{
		MaxPartitionFetchBytes: 10485760,
		FetchMaxBytes:          52428800,
		FetchMinBytes:          1,
		// kgo waits up to 5 s for fetch.min.bytes; Java 500 ms.
		FetchMaxWait:      500 * time.Millisecond,
		SessionTimeout:    45 * time.Second,
		HeartbeatInterval: 3 * time.Second,
		MetadataBackoff:   javaMetadataBackoff,
	}
}

// ConsumerSessionTimeout is the consumers' session.timeout.ms with the
// run's overrides (spec.driver.kafka.consumer), or the default when they
// do not set it or are invalid (the driver refuses them then): how long a
// group can wait for a member that is gone before it rebalances.
func ConsumerSessionTimeout(overrides map[string]string) time.Duration {
	s, err := buildConsumerSettings(overrides)
	if err != nil {
		return defaultConsumerSettings().SessionTimeout
	}
	return s.SessionTimeout
}

var consumerKeys = map[string]setter[consumerSettings]{
	"max.partition.fetch.bytes": func(s *consumerSettings, v string) error {
		n, err := parseInt(v, 1, math.MaxInt32)
		s.MaxPartitionFetchBytes = int32(n)
		return err
	},
	"fetch.max.bytes": func(s *consumerSettings, v string) error {
		n, err := parseInt(v, 1, math.MaxInt32)
		s.FetchMaxBytes = int32(n)
		return err
	},
	"fetch.min.bytes": func(s *consumerSettings, v string) error {
		n, err := parseInt(v, 1, math.MaxInt32)
		s.FetchMinBytes = int32(n)
		return err
	},
	"fetch.max.wait.ms": func(s *consumerSettings, v string) error {
		return setDuration(&s.FetchMaxWait, v, 1)
	},
	"session.timeout.ms": func(s *consumerSettings, v string) error {
		return setDuration(&s.SessionTimeout, v, 1)
	},
	"heartbeat.interval.ms": func(s *consumerSettings, v string) error {
		return setDuration(&s.HeartbeatInterval, v, 1)
	},
	"retry.backoff.max.ms": func(s *consumerSettings, v string) error {
		return setDuration(&s.MetadataBackoff, v, 1)
	},
	"client.id": func(s *consumerSettings, v string) error {
		s.ClientID = v
		return nil
	},
	// OMB's consumer yaml sets these two; the driver's start position and
	// commit policy are fixed (see consumer.go), so only OMB's values are
	// accepted, as no-ops, and others are an error instead of being ignored.
	"auto.offset.reset":  fixedValue("earliest", "the driver always starts a new subscription at the earliest offset"),
	"enable.auto.commit": fixedValue("false", "the driver commits the offsets of messages it delivered, never of unread ones"),
}

func fixedValue(want, why string) setter[consumerSettings] {
	return func(_ *consumerSettings, v string) error {
		if v != want {
			return fmt.Errorf("only %q is supported: %s", want, why)
		}
		return nil
	}
}

func buildConsumerSettings(overrides map[string]string) (consumerSettings, error) {
	s := defaultConsumerSettings()
	for _, k := range slices.Sorted(maps.Keys(overrides)) {
		set, ok := consumerKeys[k]
		if !ok {
			return s, fmt.Errorf("spec.driver.kafka.consumer[%q]: unsupported; supported keys are %s", k, strings.Join(slices.Sorted(maps.Keys(consumerKeys)), ", "))
		}
		if err := set(&s, overrides[k]); err != nil {
			return s, fmt.Errorf("spec.driver.kafka.consumer[%q]: %w", k, err)
		}
	}
	if s.HeartbeatInterval >= s.SessionTimeout {
		return s, fmt.Errorf("spec.driver.kafka.consumer: heartbeat.interval.ms (%d) must be below session.timeout.ms (%d)", s.HeartbeatInterval.Milliseconds(), s.SessionTimeout.Milliseconds())
	}
	return s, nil
}

func (s consumerSettings) opts() []kgo.Opt {
	o := []kgo.Opt{
		kgo.FetchMaxPartitionBytes(s.MaxPartitionFetchBytes),
		kgo.FetchMaxBytes(s.FetchMaxBytes),
		kgo.FetchMinBytes(s.FetchMinBytes),
		kgo.FetchMaxWait(s.FetchMaxWait),
		kgo.SessionTimeout(s.SessionTimeout),
		kgo.HeartbeatInterval(s.HeartbeatInterval),
		kgo.MetadataMinAge(s.MetadataBackoff),
	}
	if s.ClientID != "" {
		o = append(o, kgo.ClientID(s.ClientID))
	}
	return o
}

// buildTopicConfig is the durability's topic configuration plus the spec's
// topic overrides, which may not touch the durability keys. Other keys are
// checked by the broker when the topic is created.
func buildTopicConfig(durability, overrides map[string]string) (map[string]*string, error) {
	cfg := make(map[string]*string, len(durability)+len(overrides))
	for _, k := range slices.Sorted(maps.Keys(overrides)) {
		if contains(durabilityTopicKeys, k) || durability[k] != "" {
			return nil, fmt.Errorf("spec.driver.kafka.topic[%q] is set by spec.durability; remove it and choose the durability level instead", k)
		}
		v := overrides[k]
		cfg[k] = &v
	}
	for k, v := range durability {
		cfg[k] = &v
	}
	return cfg, nil
}

func parseInt(v string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return 0, fmt.Errorf("%q is not an integer", v)
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("%d is out of range [%d, %d]", n, lo, hi)
	}
	return n, nil
}

func setDuration(d *time.Duration, v string, minMs int) error {
	n, err := parseInt(v, minMs, math.MaxInt32)
	*d = time.Duration(n) * time.Millisecond
	return err
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// SupportedKeys are the producer and consumer property names this driver
// applies (topic properties pass through to the broker as they are). OMB
// driver files are mapped onto spec.driver with them (internal/ombdriver).
func SupportedKeys() (producer, consumer []string) {
	return slices.Sorted(maps.Keys(producerKeys)), slices.Sorted(maps.Keys(consumerKeys))
}
