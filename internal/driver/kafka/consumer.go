package kafka

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streambench/streambench-operator/internal/driver"
)

// consumer is one member of the subscription's consumer group.
//
// Offsets: OMB runs with enable.auto.commit=false and commits after each
// poll. Here kgo's autocommit commits only marked offsets (AutoCommitMarks),
// and a record is marked after the callback returned for it. So a rebalance
// (another consumer of the subscription joining) or Close commits exactly
// what was delivered: a partition's new owner resumes after the last
// delivered message instead of at the earliest offset, and no unread message
// is ever committed. kgo commits marked offsets on revoke and when Close
// leaves the group.
type consumer struct {
	cl    *kgo.Client
	topic string
	cb    driver.ConsumerCallback
	d     *Driver

	// mu is held while the callback runs, so Pause returns only after any
	// running callback finished, and none starts until Resume.
	mu     sync.Mutex
	cond   *sync.Cond
	paused bool
	closed bool

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	errMu    sync.Mutex
	fetchErr error

	closeOnce sync.Once
}

func newConsumer(d *Driver, topic, group string, cb driver.ConsumerCallback) (*consumer, error) {
	cl, err := kgo.NewClient(d.ConsumerOpts(topic, group)...)
	if err != nil {
		return nil, fmt.Errorf("creating consumer of %s in group %s: %w", topic, group, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &consumer{cl: cl, topic: topic, cb: cb, d: d, ctx: ctx, cancel: cancel, done: make(chan struct{})}
	c.cond = sync.NewCond(&c.mu)
	go c.run()
	return c, nil
}

func (c *consumer) run() {
	defer close(c.done)
	for {
		fetches := c.cl.PollFetches(c.ctx)
		if fetches.IsClientClosed() || c.ctx.Err() != nil {
			return
		}
		fetches.EachError(func(topic string, partition int32, err error) {
			if errors.Is(err, context.Canceled) {
				return
			}
			// The group's coordinator went (a broker killed under load,
			// issue 40): franz-go reports it once and rejoins by itself,
			// and what the member misses meanwhile is fetched again from
			// the committed offsets (the accounting counts any duplicate).
			// A notification, not the consumer's failure.
			var session *kgo.ErrGroupSession
			if errors.As(err, &session) {
				return
			}
			c.errMu.Lock()
			if c.fetchErr == nil {
				c.fetchErr = fmt.Errorf("consuming %s partition %d: %w", topic, partition, err)
			}
			c.errMu.Unlock()
		})
		fetches.EachPartition(func(p kgo.FetchTopicPartition) {
			var last *kgo.Record
			for _, r := range p.Records {
				if !c.deliver(r) {
					break
				}
				last = r
			}
			if last != nil {
				c.cl.MarkCommitRecords(last)
			}
		})
	}
}

// deliver waits while paused, then runs the callback; false when closed.
func (c *consumer) deliver(r *kgo.Record) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.paused && !c.closed {
		c.cond.Wait()
	}
	if c.closed {
		return false
	}
	c.cb(driver.Message{Payload: r.Value, PublishTime: r.Timestamp, Partition: r.Partition})
	return true
}

// Pause stops fetching and delivering; records already fetched wait for
// Resume. It must not be called from the callback.
func (c *consumer) Pause() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.paused = true
	c.cl.PauseFetchTopics(c.topic)
}

func (c *consumer) Resume() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.paused = false
	c.cl.ResumeFetchTopics(c.topic)
	c.cond.Broadcast()
}

// Close stops delivery, leaves the group (committing what was delivered)
// and returns the first fetch error seen, if any.
func (c *consumer) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		c.cond.Broadcast()
		c.mu.Unlock()
		c.cancel()
		<-c.done
		c.cl.Close()
		c.d.forget(nil, c)
	})
	c.errMu.Lock()
	defer c.errMu.Unlock()
	return c.fetchErr
}
