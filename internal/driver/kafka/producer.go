package kafka

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streambench/streambench-operator/internal/driver"
)

type producer struct {
	cl        *kgo.Client
	topic     string
	d         *Driver
	closeOnce sync.Once
}

// Send queues the record; kgo.Produce blocks while buffer.memory bytes are
// queued (OMB's blockIfQueueFull) and calls onAck once, from kgo's
// goroutine, when the broker acknowledged with the durability's acks or the
// record failed. The record's timestamp is set by kgo when it is queued and
// is what consumers see as PublishTime (CreateTime topics), as in OMB.
func (p *producer) Send(ctx context.Context, key, payload []byte, onAck driver.AckFunc) {
	p.cl.Produce(ctx, &kgo.Record{Topic: p.topic, Key: key, Value: payload}, func(_ *kgo.Record, err error) {
		onAck(err)
	})
}

// Flush waits until every queued record is acknowledged or failed.
func (p *producer) Flush(ctx context.Context) error {
	return p.cl.Flush(ctx)
}

// Close fails records still queued (their onAck gets an error) and closes
// the client; call Flush first to wait for them.
func (p *producer) Close() error {
	p.closeOnce.Do(func() {
		p.cl.Close()
		p.d.forget(p, nil)
	})
	return nil
}
