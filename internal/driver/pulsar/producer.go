package pulsar

import (
	"context"
	"fmt"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/recycle"
)

type producer struct {
	p        pulsar.Producer
	messages recycle.List[message] // taken by Send, given back by the callback
}

// message is a ProducerMessage with the ack it owes and its callback bound
// once, pooled: a ProducerMessage and a callback closure allocated per
// message added to the Go client's own garbage. The client is done with the
// message when it runs the callback (sendRequest.done touches it no more).
type message struct {
	pm       pulsar.ProducerMessage
	onAck    driver.Acker
	tag      driver.Tag
	p        *producer
	callback func(pulsar.MessageID, *pulsar.ProducerMessage, error) // m.done
}

func (m *message) done(_ pulsar.MessageID, _ *pulsar.ProducerMessage, err error) {
	onAck, payload, tag := m.onAck, m.pm.Payload, m.tag
	m.onAck = nil
	m.pm = pulsar.ProducerMessage{}
	m.p.messages.Put(m)
	onAck.Acked(payload, tag, err)
}

// CreateProducer makes a producer with OMB's settings (batching with a 1 ms
// delay and 128 KiB batches, blocking when its queue is full) and the
// spec's overrides.
func (d *Driver) CreateProducer(ctx context.Context, topic string) (driver.Producer, error) {
	p, err := d.client.CreateProducer(d.ProducerOptions(topic))
	if err != nil {
		return nil, fmt.Errorf("creating a producer on %s: %w", topic, err)
	}
	return &producer{p: p}, nil
}

// ProducerOptions are a producer's options on topic, translated from the
// spec. Client, ProducerOptions and ConsumerOptions are exported for
// hack/floor, which sends and receives through the bare client with them.
func (d *Driver) ProducerOptions(topic string) pulsar.ProducerOptions {
	return d.settings.Producer.options(topic)
}

// Client is the driver's Pulsar client (its ClientOptions are translated
// from the spec; the driver closes it).
func (d *Driver) Client() pulsar.Client { return d.client }

// Send hands the message to the client's batcher; with blockIfQueueFull it
// blocks while maxPendingMessages are unacknowledged, which the load generator
// sees as send delay. The client keeps a reference to payload until the ack,
// so the caller must not change it before onAck runs.
func (p *producer) Send(ctx context.Context, key, payload []byte, tag driver.Tag, onAck driver.Acker) {
	m := p.messages.Get()
	if m == nil {
		m = &message{p: p}
		m.callback = m.done
	}
	m.onAck = onAck
	m.tag = tag
	m.pm.Payload = payload
	if key != nil {
		m.pm.Key = string(key)
	}
	p.p.SendAsync(ctx, &m.pm, m.callback)
}

func (p *producer) Flush(ctx context.Context) error {
	return p.p.FlushWithCtx(ctx)
}

func (p *producer) Close() error {
	p.p.Close()
	return nil
}
