package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	pc "github.com/apache/pulsar-client-go/pulsar"

	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/driver/pulsar"
	"github.com/streambench/streambench-operator/internal/recycle"
)

// pulsarClient is a bare pulsar-client-go producer and consumer with the
// options streambench's Pulsar driver gives its own (its Client,
// ProducerOptions, ConsumerOptions); the driver only creates and deletes
// the topic.
type pulsarClient struct {
	drv            *pulsar.Driver
	prods          []pc.Producer // one per producer
	cons           pc.Consumer
	messages       recycle.List[pc.ProducerMessage] // as the driver recycles its own
	callback       func(pc.MessageID, *pc.ProducerMessage, error)
	nAcked, nRecvd atomic.Int64
	nFailed        atomic.Int64
	cancel         context.CancelFunc
	consumerDone   chan struct{}
	unique         *buffers // with --unique, where the payloads go back
}

func newPulsar(ctx context.Context, cfg driver.Config, p plan) (client, error) {
	d, err := pulsar.New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	topic := d.TopicName(0)
	if err := d.CreateTopics(ctx, []driver.Topic{{Name: topic, Partitions: p.partitions}}); err != nil {
		_ = d.Close()
		return nil, err
	}
	c := &pulsarClient{drv: d, consumerDone: make(chan struct{}), cancel: func() {}, unique: p.unique}
	c.callback = c.done
	if p.consume {
		if c.cons, err = d.Client().Subscribe(d.ConsumerOptions(topic, "floor")); err != nil {
			c.close()
			return nil, fmt.Errorf("consumer: %w", err)
		}
		var cctx context.Context
		cctx, c.cancel = context.WithCancel(context.Background())
		go c.consume(cctx)
	} else {
		close(c.consumerDone)
	}
	for range p.producers {
		prod, err := d.Client().CreateProducer(d.ProducerOptions(topic))
		if err != nil {
			c.close()
			return nil, fmt.Errorf("producer: %w", err)
		}
		c.prods = append(c.prods, prod)
	}
	return c, nil
}

func (c *pulsarClient) send(k int, payload []byte) {
	m := c.messages.Get()
	if m == nil {
		m = &pc.ProducerMessage{}
	}
	m.Payload = payload
	c.prods[k].SendAsync(context.Background(), m, c.callback)
}

func (c *pulsarClient) done(_ pc.MessageID, m *pc.ProducerMessage, err error) {
	if err != nil {
		c.nFailed.Add(1)
	} else {
		c.nAcked.Add(1)
	}
	c.unique.giveBack(m.Payload)
	*m = pc.ProducerMessage{}
	c.messages.Put(m)
}

// consume receives and acknowledges each message, as the driver's
// consumer does, counting without looking at them.
func (c *pulsarClient) consume(ctx context.Context) {
	defer close(c.consumerDone)
	for {
		msg, err := c.cons.Receive(ctx)
		if err != nil {
			select { // as the driver: back off rather than spin
			case <-ctx.Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		c.nRecvd.Add(1)
		_ = c.cons.Ack(msg)
	}
}

func (c *pulsarClient) flush(ctx context.Context) error {
	for _, prod := range c.prods {
		if err := prod.FlushWithCtx(ctx); err != nil {
			return err
		}
	}
	if n := c.nFailed.Load(); n > 0 {
		return fmt.Errorf("%d messages failed", n)
	}
	return nil
}

func (c *pulsarClient) acked() int64    { return c.nAcked.Load() }
func (c *pulsarClient) received() int64 { return c.nRecvd.Load() }

func (c *pulsarClient) close() {
	for _, prod := range c.prods {
		prod.Close()
	}
	c.cancel()
	<-c.consumerDone
	if c.cons != nil {
		c.cons.Close()
	}
	_ = c.drv.DeleteTopics(context.Background())
	_ = c.drv.Close()
}
