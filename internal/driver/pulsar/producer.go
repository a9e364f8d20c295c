package pulsar

import (
	"context"
	"fmt"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/streambench/streambench-operator/internal/driver"
)

type producer struct {
	p pulsar.Producer
}

// CreateProducer makes a producer with OMB's settings (batching with a 1 ms
// delay and 128 KiB batches, blocking when its queue is full) and the
// spec's overrides.
func (d *Driver) CreateProducer(ctx context.Context, topic string) (driver.Producer, error) {
	p, err := d.client.CreateProducer(d.settings.Producer.options(topic))
	if err != nil {
		return nil, fmt.Errorf("creating a producer on %s: %w", topic, err)
	}
	return &producer{p: p}, nil
}

// Send hands the message to the client's batcher; with blockIfQueueFull it
// blocks while maxPendingMessages are unacknowledged, which the load generator
// sees as send delay. The client keeps a reference to payload until the ack,
// so the caller must not change it before onAck runs.
func (p *producer) Send(ctx context.Context, key, payload []byte, onAck driver.AckFunc) {
	msg := &pulsar.ProducerMessage{Payload: payload}
	if key != nil {
		msg.Key = string(key)
	}
	p.p.SendAsync(ctx, msg, func(_ pulsar.MessageID, _ *pulsar.ProducerMessage, err error) {
		onAck(err)
	})
}

func (p *producer) Flush(ctx context.Context) error {
	return p.p.FlushWithCtx(ctx)
}

func (p *producer) Close() error {
	p.p.Close()
	return nil
}
