// Package driver is the seam between the load generator and a messaging
// system. A Driver creates topics and clients; the load generator owns rates,
// timestamps and measurements, so both systems are measured the same way.
package driver

import (
	"context"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// Config is everything a driver needs to reach and configure the system under
// test for one run.
type Config struct {
	// System is kafka or pulsar.
	System v1alpha1.System
	// Brokers are the addresses of the system under test.
	Brokers v1alpha1.BrokerEndpoints
	// Durability is the effective durability (internal/durability): the
	// topic, namespace and producer settings the driver must apply.
	Durability v1alpha1.EffectiveDurability
	// Overrides are the spec's client setting overrides (may be nil).
	Overrides *v1alpha1.DriverSpec
	// RunID names this run; Pulsar creates the namespace streambench/sb-<RunID>,
	// Kafka names its topics sb-<RunID>-<i>, so runs never share topics.
	RunID string
	// Security is how the clients reach a secured cluster (TLS,
	// authentication); nil means plaintext and anonymous.
	Security *Security
}

// Topic is one benchmark topic.
type Topic struct {
	Name       string
	Partitions int32
}

// Tag is the sender's own, carried with a message from Send to its Acker
// untouched: the worker keeps the message's intended and send times in it.
// It travels inside the client's record of the message, which the client
// has just touched when it acknowledges, so the ack reads the times without
// loading a cache line of the sender's own. At 20k msg/s a message is in
// flight for ~20 ms, long enough for every line only the sender wrote to go
// cold, and a per-message object of the worker's was one cold line at the
// send and one at the ack (0.41-0.57 CPU-s per million messages on Kafka).
type Tag [2]int64

// Acker is told once per message when the broker acknowledges it (err
// nil) or the send fails, with the message's payload (the caller's buffer,
// which the client no longer holds) and its Tag. An interface, not a func:
// a method value is an object of its own, one more line to load per ack.
type Acker interface {
	Acked(payload []byte, tag Tag, err error)
}

// AckFunc is a function of the error alone as an Acker, for callers that
// keep nothing per message.
type AckFunc func(err error)

// Acked calls f.
func (f AckFunc) Acked(_ []byte, _ Tag, err error) { f(err) }

// Producer publishes messages asynchronously.
type Producer interface {
	// Send queues one message; onAck runs when it is acknowledged or
	// failed, with payload and tag as given.
	// Send may block while the client's queue is full (OMB's
	// blockIfQueueFull), which the load generator sees as send delay.
	Send(ctx context.Context, key, payload []byte, tag Tag, onAck Acker)
	// Flush waits for every queued message to be acknowledged or failed.
	Flush(ctx context.Context) error
	Close() error
}

// Message is one received message.
type Message struct {
	Payload []byte
	// PublishTime is the broker's timestamp of the message, if it has one.
	PublishTime time.Time
	// Partition the message came from, for per-partition accounting.
	Partition int32
}

// ConsumerCallback receives each message once; it must not keep Payload
// after it returns.
type ConsumerCallback func(Message)

// Consumer reads one subscription (Kafka: consumer group) of one topic.
type Consumer interface {
	// Pause stops delivering messages until Resume (backlog building).
	Pause()
	Resume()
	Close() error
}

// SecurityDescriber is a Driver that says which security its clients
// negotiated (protocol, mechanism, TLS version), for the results.
type SecurityDescriber interface {
	SecurityInfo() v1alpha1.SecurityInfo
}

// Driver is one system's client factory.
type Driver interface {
	// CreateTopics creates the benchmark topics with the durability's topic
	// settings (Kafka) or in the run's namespace with its persistence
	// policy (Pulsar).
	CreateTopics(ctx context.Context, topics []Topic) error
	// TopicName returns the full name of the i-th benchmark topic.
	TopicName(i int) string
	CreateProducer(ctx context.Context, topic string) (Producer, error)
	// CreateConsumer subscribes from the earliest position; messages go to cb.
	CreateConsumer(ctx context.Context, topic, subscription string, cb ConsumerCallback) (Consumer, error)
	// DeleteTopics removes what CreateTopics made (topics are not left behind).
	DeleteTopics(ctx context.Context) error
	Close() error
}
