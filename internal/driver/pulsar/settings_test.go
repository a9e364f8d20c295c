package pulsar

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

func TestTranslateDefaultsAreOMBs(t *testing.T) {
	s, err := translate(nil)
	if err != nil {
		t.Fatal(err)
	}
	po := s.Producer.options("t")
	if po.DisableBatching || po.BatchingMaxPublishDelay != time.Millisecond || po.BatchingMaxSize != 131072 {
		t.Errorf("producer batching = disabled %v, delay %v, size %d; want OMB's enabled, 1ms, 131072", po.DisableBatching, po.BatchingMaxPublishDelay, po.BatchingMaxSize)
	}
	// OMB's batchingMaxMessages(Integer.MAX_VALUE) and sendTimeout(0).
	if po.BatchingMaxMessages != math.MaxInt32 || po.SendTimeout >= 0 {
		t.Errorf("producer batching max messages %d, send timeout %v; want OMB's unbounded and none (negative)", po.BatchingMaxMessages, po.SendTimeout)
	}
	if po.DisableBlockIfQueueFull || po.MaxPendingMessages != defaultMaxPendingMessages {
		t.Errorf("producer queue = disableBlock %v, maxPending %d; want blocking with %d", po.DisableBlockIfQueueFull, po.MaxPendingMessages, defaultMaxPendingMessages)
	}
	co := s.Consumer.options("t", "sub")
	if co.Type != pulsar.Failover || co.ReceiverQueueSize != 10000 || co.SubscriptionInitialPosition != pulsar.SubscriptionPositionEarliest {
		t.Errorf("consumer = type %v, queue %d, position %v; want Failover, 10000, earliest", co.Type, co.ReceiverQueueSize, co.SubscriptionInitialPosition)
	}
	if co.AckGroupingOptions != nil {
		t.Errorf("ack grouping = %+v; want the client's default", co.AckGroupingOptions)
	}
	cl := s.Client.options("pulsar://x:6650")
	if cl.MaxConnectionsPerBroker != 8 || cl.OperationTimeout != 30*time.Second || cl.URL != "pulsar://x:6650" {
		t.Errorf("client = conns %d, op timeout %v, url %q; want 8, 30s, the service URL", cl.MaxConnectionsPerBroker, cl.OperationTimeout, cl.URL)
	}
}

func TestTranslateOverrides(t *testing.T) {
	tests := []struct {
		name  string
		o     v1alpha1.PulsarDriver
		check func(t *testing.T, s settings)
	}{
		{
			name: "producer batching and queue",
			o: v1alpha1.PulsarDriver{Producer: map[string]string{
				"batchingEnabled": "false", "batchingMaxPublishDelayMs": "5", "batchingMaxBytes": "1048576",
				"batchingMaxMessages": "5000", "blockIfQueueFull": "false", "maxPendingMessages": "2000",
			}},
			check: func(t *testing.T, s settings) {
				o := s.Producer.options("t")
				if !o.DisableBatching || o.BatchingMaxPublishDelay != 5*time.Millisecond || o.BatchingMaxSize != 1048576 ||
					o.BatchingMaxMessages != 5000 || !o.DisableBlockIfQueueFull || o.MaxPendingMessages != 2000 {
					t.Errorf("producer options = %+v", o)
				}
			},
		},
		{
			name: "maxPendingMessages 0 means OMB's unbounded",
			o:    v1alpha1.PulsarDriver{Producer: map[string]string{"maxPendingMessages": "0"}},
			check: func(t *testing.T, s settings) {
				if s.Producer.MaxPendingMessages != defaultMaxPendingMessages {
					t.Errorf("maxPendingMessages = %d; want %d", s.Producer.MaxPendingMessages, defaultMaxPendingMessages)
				}
			},
		},
		{
			name: "compression and hashing",
			o:    v1alpha1.PulsarDriver{Producer: map[string]string{"compressionType": "zstd", "hashingScheme": "Murmur3_32Hash"}},
			check: func(t *testing.T, s settings) {
				if s.Producer.Compression != pulsar.ZSTD || s.Producer.HashingScheme != pulsar.Murmur3_32Hash {
					t.Errorf("compression %v hashing %v; want ZSTD, Murmur3_32Hash", s.Producer.Compression, s.Producer.HashingScheme)
				}
			},
		},
		{
			name: "Java's sendTimeoutMs 0 (no timeout) becomes the Go client's negative",
			o:    v1alpha1.PulsarDriver{Producer: map[string]string{"sendTimeoutMs": "0"}},
			check: func(t *testing.T, s settings) {
				if s.Producer.SendTimeout >= 0 {
					t.Errorf("send timeout = %v; want negative (disabled)", s.Producer.SendTimeout)
				}
			},
		},
		{
			name: "consumer",
			o: v1alpha1.PulsarDriver{Consumer: map[string]string{
				"receiverQueueSize": "1000", "subscriptionType": "Key_Shared",
				"autoScaledReceiverQueueSizeEnabled": "true", "acknowledgementsGroupTimeMicros": "0",
			}},
			check: func(t *testing.T, s settings) {
				o := s.Consumer.options("t", "s")
				if o.ReceiverQueueSize != 1000 || o.Type != pulsar.KeyShared || !o.EnableAutoScaledReceiverQueueSize {
					t.Errorf("consumer options = %+v", o)
				}
				if o.AckGroupingOptions == nil || o.AckGroupingOptions.MaxTime != 0 {
					t.Errorf("ack grouping = %+v; want MaxTime 0 (acknowledge at once)", o.AckGroupingOptions)
				}
			},
		},
		{
			name: "client",
			o: v1alpha1.PulsarDriver{Client: map[string]string{
				"connectionsPerBroker": "16", "operationTimeoutMs": "5000", "connectionTimeoutMs": "2000",
				"keepAliveIntervalSeconds": "10", "memoryLimitBytes": "134217728",
			}},
			check: func(t *testing.T, s settings) {
				o := s.Client.options("u")
				if o.MaxConnectionsPerBroker != 16 || o.OperationTimeout != 5*time.Second || o.ConnectionTimeout != 2*time.Second ||
					o.KeepAliveInterval != 10*time.Second || o.MemoryLimitBytes != 134217728 {
					t.Errorf("client options = %+v", o)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.o
			s, err := translate(&v1alpha1.DriverSpec{Pulsar: &o})
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, s)
		})
	}
}

func TestTranslateRejects(t *testing.T) {
	tests := []struct {
		name string
		spec v1alpha1.DriverSpec
		want []string // substrings of the error
	}{
		{
			name: "unknown key names the field and lists the supported keys",
			spec: v1alpha1.DriverSpec{Pulsar: &v1alpha1.PulsarDriver{Producer: map[string]string{"batchingMaxPublishDelay": "1"}}},
			want: []string{"spec.driver.pulsar.producer.batchingMaxPublishDelay is not a known setting", "batchingMaxPublishDelayMs", "compressionType"},
		},
		{
			name: "Java thread pools have no Go equivalent",
			spec: v1alpha1.DriverSpec{Pulsar: &v1alpha1.PulsarDriver{Client: map[string]string{"ioThreads": "16"}}},
			want: []string{"spec.driver.pulsar.client.ioThreads is not supported", "goroutines"},
		},
		{
			name: "the cross-partition queue cap does not exist in the Go client",
			spec: v1alpha1.DriverSpec{Pulsar: &v1alpha1.PulsarDriver{Consumer: map[string]string{"maxTotalReceiverQueueSizeAcrossPartitions": "5000000"}}},
			want: []string{"maxTotalReceiverQueueSizeAcrossPartitions is not supported"},
		},
		{
			name: "bad values say what they want",
			spec: v1alpha1.DriverSpec{Pulsar: &v1alpha1.PulsarDriver{
				Producer: map[string]string{"compressionType": "SNAPPY", "batchingEnabled": "yes please"},
				Consumer: map[string]string{"receiverQueueSize": "0", "subscriptionType": "failover"},
			}},
			want: []string{
				"spec.driver.pulsar.producer.compressionType: want NONE, LZ4, ZLIB or ZSTD",
				"spec.driver.pulsar.producer.batchingEnabled: want true or false",
				"spec.driver.pulsar.consumer.receiverQueueSize: want a whole number > 0",
				"spec.driver.pulsar.consumer.subscriptionType: want Exclusive, Shared, Failover or Key_Shared",
			},
		},
		{
			name: "a kafka section for a pulsar run",
			spec: v1alpha1.DriverSpec{Kafka: &v1alpha1.KafkaDriver{Producer: map[string]string{"linger.ms": "1"}}},
			want: []string{"spec.driver.kafka is set but the system is pulsar"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := tt.spec
			_, err := translate(&spec)
			if err == nil {
				t.Fatal("translate accepted the overrides; want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestCheckPersistence(t *testing.T) {
	tests := []struct {
		p    *v1alpha1.PulsarDurability
		want string
	}{
		{nil, "durability.pulsar is missing"},
		{&v1alpha1.PulsarDurability{EnsembleSize: 3, WriteQuorum: 3, AckQuorum: 0}, "must all be at least 1"},
		{&v1alpha1.PulsarDurability{EnsembleSize: 2, WriteQuorum: 3, AckQuorum: 2}, "ackQuorum (2) <= writeQuorum (3) <= ensembleSize (2)"},
		{&v1alpha1.PulsarDurability{EnsembleSize: 3, WriteQuorum: 3, AckQuorum: 2}, ""},
	}
	for _, tt := range tests {
		err := checkPersistence(tt.p)
		if tt.want == "" {
			if err != nil {
				t.Errorf("checkPersistence(%+v) = %v; want nil", tt.p, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("checkPersistence(%+v) = %v; want an error containing %q", tt.p, err, tt.want)
		}
	}
}
