package kafka

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/durability"
)

func effective(t *testing.T, level v1alpha1.Level) v1alpha1.EffectiveDurability {
	t.Helper()
	eff, err := durability.Translate(v1alpha1.SystemKafka, v1alpha1.DurabilitySpec{Level: &level})
	if err != nil {
		t.Fatal(err)
	}
	return eff
}

// kgoClient builds a client from opts without contacting any broker, so the
// test can read back what kgo really got (OptValue).
func kgoClient(t *testing.T, opts []kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers("127.0.0.1:1")}, opts...)...)
	if err != nil {
		t.Fatalf("kgo refused the options: %v", err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func TestProducerSettings(t *testing.T) {
	tests := []struct {
		name      string
		level     v1alpha1.Level
		overrides map[string]string
		wantErr   string
		check     func(t *testing.T, s producerSettings, cl *kgo.Client)
	}{
		{
			name:  "sync replication: acks=all, idempotent, OMB defaults",
			level: v1alpha1.Level2,
			check: func(t *testing.T, s producerSettings, cl *kgo.Client) {
				eq(t, "acks", cl.OptValue(kgo.RequiredAcks), kgo.AllISRAcks())
				eq(t, "idempotence disabled", cl.OptValue(kgo.DisableIdempotentWrite), false)
				eq(t, "linger", cl.OptValue(kgo.ProducerLinger), time.Millisecond)
				eq(t, "batch.size", s.BatchMaxBytes, int32(1048576))
				eq(t, "compression", cl.OptValue(kgo.ProducerBatchCompression), []kgo.CompressionCodec{kgo.NoCompression()})
				eq(t, "buffer.memory", cl.OptValue(kgo.MaxBufferedBytes), int64(33554432))
				// OMB's 20 min request timeout, and Java's delivery
				// timeout for it: linger + request timeout.
				eq(t, "request.timeout", cl.OptValue(kgo.ProduceRequestTimeout), 1200*time.Second)
				eq(t, "delivery.timeout", cl.OptValue(kgo.RecordDeliveryTimeout), 1200*time.Second+time.Millisecond)
				// Java's retry.backoff.max.ms between metadata requests,
				// not kgo's 5 s MetadataMinAge.
				eq(t, "retry.backoff.max", cl.OptValue(kgo.MetadataMinAge), time.Second)
			},
		},
		{
			name:      "retry.backoff.max.ms sets how soon the producer asks for new metadata",
			level:     v1alpha1.Level2,
			overrides: map[string]string{"retry.backoff.max.ms": "250"},
			check: func(t *testing.T, s producerSettings, cl *kgo.Client) {
				eq(t, "retry.backoff.max", cl.OptValue(kgo.MetadataMinAge), 250*time.Millisecond)
			},
		},
		{
			name:      "a delivery timeout below linger + request timeout is refused, as Java does",
			level:     v1alpha1.Level2,
			overrides: map[string]string{"delivery.timeout.ms": "60000"},
			wantErr:   `spec.driver.kafka.producer["delivery.timeout.ms"] (60000) is below linger.ms + request.timeout.ms (1 + 1200000)`,
		},
		{
			name:      "a shorter request timeout brings Java's 120 s delivery timeout back",
			level:     v1alpha1.Level2,
			overrides: map[string]string{"request.timeout.ms": "30000"},
			check: func(t *testing.T, s producerSettings, cl *kgo.Client) {
				eq(t, "delivery.timeout", cl.OptValue(kgo.RecordDeliveryTimeout), 120*time.Second)
			},
		},
		{
			name:  "level 1 has the same producer as level 2",
			level: v1alpha1.Level1,
			check: func(t *testing.T, s producerSettings, cl *kgo.Client) {
				eq(t, "acks", cl.OptValue(kgo.RequiredAcks), kgo.AllISRAcks())
				eq(t, "idempotent", s.Idempotent, true)
			},
		},
		{
			name:  "async replication: acks=1, idempotence off, Java's 5 in flight",
			level: v1alpha1.Level4,
			check: func(t *testing.T, s producerSettings, cl *kgo.Client) {
				eq(t, "acks", cl.OptValue(kgo.RequiredAcks), kgo.LeaderAck())
				eq(t, "idempotence disabled", cl.OptValue(kgo.DisableIdempotentWrite), true)
				eq(t, "in flight", cl.OptValue(kgo.MaxProduceRequestsInflightPerBroker), 5)
			},
		},
		{
			name:      "overrides are translated",
			level:     v1alpha1.Level4,
			overrides: map[string]string{"linger.ms": "7", "batch.size": "131072", "compression.type": "zstd", "max.in.flight.requests.per.connection": "1", "retries": "3", "client.id": "p1"},
			check: func(t *testing.T, s producerSettings, cl *kgo.Client) {
				eq(t, "linger", cl.OptValue(kgo.ProducerLinger), 7*time.Millisecond)
				eq(t, "batch.size", s.BatchMaxBytes, int32(131072))
				eq(t, "compression", cl.OptValue(kgo.ProducerBatchCompression), []kgo.CompressionCodec{kgo.ZstdCompression()})
				eq(t, "in flight", cl.OptValue(kgo.MaxProduceRequestsInflightPerBroker), 1)
				eq(t, "retries", cl.OptValue(kgo.RecordRetries), int64(3))
				eq(t, "client id", cl.OptValue(kgo.ClientID), "p1")
				eq(t, "acks unchanged", cl.OptValue(kgo.RequiredAcks), kgo.LeaderAck())
			},
		},
		{
			name:      "5 in flight is accepted with idempotence (it is what kgo does)",
			level:     v1alpha1.Level2,
			overrides: map[string]string{"max.in.flight.requests.per.connection": "5"},
			check: func(t *testing.T, s producerSettings, cl *kgo.Client) {
				eq(t, "acks", cl.OptValue(kgo.RequiredAcks), kgo.AllISRAcks())
			},
		},
		{
			name:      "fewer in flight cannot be honoured with idempotence",
			level:     v1alpha1.Level2,
			overrides: map[string]string{"max.in.flight.requests.per.connection": "1"},
			wantErr:   `spec.driver.kafka.producer["max.in.flight.requests.per.connection"] (1): idempotent writes`,
		},
		{
			name:      "unknown key names itself and the supported keys",
			level:     v1alpha1.Level2,
			overrides: map[string]string{"foo": "1"},
			wantErr:   `spec.driver.kafka.producer["foo"]: unsupported; supported keys are batch.size, buffer.memory, client.id, compression.type, delivery.timeout.ms, linger.ms, max.in.flight.requests.per.connection, request.timeout.ms, retries`,
		},
		{
			name:      "acks belongs to the durability",
			level:     v1alpha1.Level4,
			overrides: map[string]string{"acks": "all"},
			wantErr:   `spec.driver.kafka.producer["acks"] is set by spec.durability`,
		},
		{
			name:      "idempotence belongs to the durability",
			level:     v1alpha1.Level4,
			overrides: map[string]string{"enable.idempotence": "true"},
			wantErr:   `spec.driver.kafka.producer["enable.idempotence"] is set by spec.durability`,
		},
		{
			name:      "bad number",
			level:     v1alpha1.Level2,
			overrides: map[string]string{"linger.ms": "soon"},
			wantErr:   `spec.driver.kafka.producer["linger.ms"]: "soon" is not an integer`,
		},
		{
			name:      "batch below kgo's minimum",
			level:     v1alpha1.Level2,
			overrides: map[string]string{"batch.size": "100"},
			wantErr:   `spec.driver.kafka.producer["batch.size"]: 100 is out of range [512, 1073741824]`,
		},
		{
			name:      "bad compression",
			level:     v1alpha1.Level2,
			overrides: map[string]string{"compression.type": "brotli"},
			wantErr:   `"brotli" is not a compression type; use one of gzip, lz4, none, snappy, zstd`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := buildProducerSettings(effective(t, tt.level).Kafka.Producer, tt.overrides)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, s, kgoClient(t, s.opts()))
		})
	}
}

func TestProducerSettingsFromBrokenDurability(t *testing.T) {
	tests := []struct {
		name    string
		dur     map[string]string
		wantErr string
	}{
		{"no acks", map[string]string{}, `producer["acks"] is missing`},
		{"bad acks", map[string]string{"acks": "2"}, `producer["acks"] = "2"`},
		{"idempotence without acks=all", map[string]string{"acks": "1", "enable.idempotence": "true"}, "require acks=all"},
		{"unknown durability key", map[string]string{"acks": "all", "linger.ms": "3"}, `producer["linger.ms"] is not a key the Kafka driver applies`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := buildProducerSettings(tt.dur, nil)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestConsumerSettings(t *testing.T) {
	tests := []struct {
		name      string
		overrides map[string]string
		wantErr   string
		check     func(t *testing.T, cl *kgo.Client)
	}{
		{
			name: "OMB and Java defaults",
			check: func(t *testing.T, cl *kgo.Client) {
				eq(t, "max.partition.fetch.bytes", cl.OptValue(kgo.FetchMaxPartitionBytes), int32(10485760))
				eq(t, "fetch.max.wait.ms", cl.OptValue(kgo.FetchMaxWait), 500*time.Millisecond)
				eq(t, "fetch.max.bytes", cl.OptValue(kgo.FetchMaxBytes), int32(52428800))
				eq(t, "retry.backoff.max.ms", cl.OptValue(kgo.MetadataMinAge), time.Second)
			},
		},
		{
			name:      "overrides are translated; OMB's fixed keys are accepted",
			overrides: map[string]string{"max.partition.fetch.bytes": "1048576", "fetch.min.bytes": "1024", "fetch.max.wait.ms": "100", "auto.offset.reset": "earliest", "enable.auto.commit": "false", "retry.backoff.max.ms": "300"},
			check: func(t *testing.T, cl *kgo.Client) {
				eq(t, "retry.backoff.max.ms", cl.OptValue(kgo.MetadataMinAge), 300*time.Millisecond)
				eq(t, "max.partition.fetch.bytes", cl.OptValue(kgo.FetchMaxPartitionBytes), int32(1048576))
				eq(t, "fetch.min.bytes", cl.OptValue(kgo.FetchMinBytes), int32(1024))
				eq(t, "fetch.max.wait.ms", cl.OptValue(kgo.FetchMaxWait), 100*time.Millisecond)
			},
		},
		{
			name:      "unknown key",
			overrides: map[string]string{"group.id": "x"},
			wantErr:   `spec.driver.kafka.consumer["group.id"]: unsupported; supported keys are auto.offset.reset, client.id, enable.auto.commit, fetch.max.bytes,`,
		},
		{
			name:      "latest would skip messages the run sent",
			overrides: map[string]string{"auto.offset.reset": "latest"},
			wantErr:   `spec.driver.kafka.consumer["auto.offset.reset"]: only "earliest" is supported`,
		},
		{
			name:      "heartbeat must be below the session timeout",
			overrides: map[string]string{"session.timeout.ms": "3000"},
			wantErr:   "heartbeat.interval.ms (3000) must be below session.timeout.ms (3000)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := buildConsumerSettings(tt.overrides)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, kgoClient(t, append(s.opts(), kgo.ConsumerGroup("g"), kgo.ConsumeTopics("t"))))
		})
	}
}

func TestTopicConfig(t *testing.T) {
	tests := []struct {
		name      string
		level     v1alpha1.Level
		overrides map[string]string
		want      map[string]string
		wantErr   string
	}{
		{
			name:  "level 1: per-message flush and min ISR 2",
			level: v1alpha1.Level1,
			want:  map[string]string{"min.insync.replicas": "2", "flush.messages": "1", "flush.ms": "0", "unclean.leader.election.enable": "false"},
		},
		{
			name:      "level 2 plus a retention override",
			level:     v1alpha1.Level2,
			overrides: map[string]string{"retention.ms": "600000"},
			want:      map[string]string{"min.insync.replicas": "2", "unclean.leader.election.enable": "false", "retention.ms": "600000"},
		},
		{
			name:      "flush.ms belongs to the durability even when it does not set it",
			level:     v1alpha1.Level2,
			overrides: map[string]string{"flush.ms": "10"},
			wantErr:   `spec.driver.kafka.topic["flush.ms"] is set by spec.durability`,
		},
		{
			name:      "unclean election belongs to the durability",
			level:     v1alpha1.Level4,
			overrides: map[string]string{"unclean.leader.election.enable": "true"},
			wantErr:   `spec.driver.kafka.topic["unclean.leader.election.enable"] is set by spec.durability`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := buildTopicConfig(effective(t, tt.level).Kafka.Topic, tt.overrides)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			eq(t, "topic config", printable(got), tt.want)
		})
	}
}

// TestNewRefusesBadConfig covers the checks New makes before it contacts
// any broker.
func TestNewRefusesBadConfig(t *testing.T) {
	good := func() driver.Config {
		return driver.Config{
			System:     v1alpha1.SystemKafka,
			Brokers:    v1alpha1.BrokerEndpoints{BootstrapServers: "127.0.0.1:1"},
			Durability: effective(t, v1alpha1.Level2),
			RunID:      "r1",
		}
	}
	tests := []struct {
		name    string
		mutate  func(c *driver.Config)
		wantErr string
	}{
		{"pulsar system", func(c *driver.Config) { c.System = v1alpha1.SystemPulsar }, `Config.System is "pulsar"`},
		{"no bootstrap", func(c *driver.Config) { c.Brokers.BootstrapServers = " , " }, "brokers.bootstrapServers is empty"},
		{"run id with a slash", func(c *driver.Config) { c.RunID = "a/b" }, `RunID "a/b" must be`},
		{"no kafka durability", func(c *driver.Config) { c.Durability.Kafka = nil }, "Config.Durability.Kafka is nil"},
		{"pulsar overrides", func(c *driver.Config) { c.Overrides = &v1alpha1.DriverSpec{Pulsar: &v1alpha1.PulsarDriver{}} }, "spec.driver.pulsar is set for a kafka run"},
		{"bad producer override", func(c *driver.Config) {
			c.Overrides = &v1alpha1.DriverSpec{Kafka: &v1alpha1.KafkaDriver{Producer: map[string]string{"foo": "1"}}}
		}, `spec.driver.kafka.producer["foo"]: unsupported`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := good()
			tt.mutate(&c)
			_, err := New(context.Background(), c)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func eq(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %#v (%T), want %#v (%T)", what, got, got, want, want)
	}
}
