package main

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/driver/kafka"
	"github.com/streambench/streambench-operator/internal/recycle"
)

// kafkaClient is a bare kgo producer and consumer with the options
// streambench's Kafka driver gives its own (kafka.Driver.ProducerOpts,
// ConsumerOpts); the driver only creates and deletes the topic.
type kafkaClient struct {
	drv            *kafka.Driver
	prods          []*kgo.Client // one client per producer, as the driver makes
	cons           *kgo.Client
	records        recycle.List[kgo.Record] // as the driver recycles its records
	promise        func(*kgo.Record, error)
	nAcked, nRecvd atomic.Int64
	nFailed        atomic.Int64
	consumerDone   chan struct{}
	unique         *buffers // with --unique, where the payloads go back
}

func newKafka(ctx context.Context, cfg driver.Config, p plan) (client, error) {
	d, err := kafka.New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	topic := d.TopicName(0)
	if err := d.CreateTopics(ctx, []driver.Topic{{Name: topic, Partitions: p.partitions}}); err != nil {
		_ = d.Close()
		return nil, err
	}
	c := &kafkaClient{drv: d, consumerDone: make(chan struct{}), unique: p.unique}
	c.promise = c.done
	if p.consume {
		if c.cons, err = kgo.NewClient(d.ConsumerOpts(topic, "floor")...); err != nil {
			c.close()
			return nil, fmt.Errorf("consumer: %w", err)
		}
		go c.consume()
	} else {
		close(c.consumerDone)
	}
	for range p.producers {
		prod, err := kgo.NewClient(d.ProducerOpts(topic)...)
		if err != nil {
			c.close()
			return nil, fmt.Errorf("producer: %w", err)
		}
		c.prods = append(c.prods, prod)
	}
	return c, nil
}

func (c *kafkaClient) send(k int, payload []byte) {
	r := c.records.Get()
	if r == nil {
		r = &kgo.Record{}
	}
	r.Value = payload
	c.prods[k].Produce(context.Background(), r, c.promise)
}

func (c *kafkaClient) done(r *kgo.Record, err error) {
	if err != nil {
		c.nFailed.Add(1)
	} else {
		c.nAcked.Add(1)
	}
	c.unique.giveBack(r.Value)
	*r = kgo.Record{}
	c.records.Put(r)
}

// consume polls and marks each partition's last record for the commit, as
// the driver's consumer does, counting records without looking at them.
func (c *kafkaClient) consume() {
	defer close(c.consumerDone)
	for {
		fs := c.cons.PollFetches(context.Background())
		if fs.IsClientClosed() {
			return
		}
		fs.EachPartition(func(p kgo.FetchTopicPartition) {
			if n := len(p.Records); n > 0 {
				c.nRecvd.Add(int64(n))
				c.cons.MarkCommitRecords(p.Records[n-1])
			}
		})
	}
}

func (c *kafkaClient) flush(ctx context.Context) error {
	for _, prod := range c.prods {
		if err := prod.Flush(ctx); err != nil {
			return err
		}
	}
	if n := c.nFailed.Load(); n > 0 {
		return fmt.Errorf("%d records failed", n)
	}
	return nil
}

func (c *kafkaClient) acked() int64    { return c.nAcked.Load() }
func (c *kafkaClient) received() int64 { return c.nRecvd.Load() }

func (c *kafkaClient) close() {
	for _, prod := range c.prods {
		prod.Close()
	}
	if c.cons != nil {
		c.cons.Close()
		<-c.consumerDone
	}
	_ = c.drv.DeleteTopics(context.Background())
	_ = c.drv.Close()
}
