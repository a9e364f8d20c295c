package pulsar

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/streambench/streambench-operator/internal/driver"
)

// consumer delivers each message to the callback and acknowledges it, as
// OMB's consumer does. The Go client has no Pause/Resume on a consumer (v0.19),
// so pausing stops this loop from taking messages: the receiver queues fill,
// the client stops granting the broker flow permits, and the backlog builds on
// the broker, which is what OMB's backlog tests need.
type consumer struct {
	c      pulsar.Consumer
	cb     driver.ConsumerCallback
	cancel context.CancelFunc
	done   chan struct{}

	// mu is held while a message is delivered, so that once Pause returns no
	// callback runs until Resume.
	mu     sync.Mutex
	cond   *sync.Cond
	paused bool
	closed bool

	closeOnce sync.Once
}

// CreateConsumer subscribes from the earliest position with OMB's settings
// (Failover, receiver queue 10000) and the spec's overrides.
func (d *Driver) CreateConsumer(ctx context.Context, topic, subscription string, cb driver.ConsumerCallback) (driver.Consumer, error) {
	if cb == nil {
		return nil, errors.New("pulsar consumer: callback is nil")
	}
	c, err := d.client.Subscribe(d.ConsumerOptions(topic, subscription))
	if err != nil {
		return nil, fmt.Errorf("subscribing %s to %s: %w", subscription, topic, err)
	}
	loopCtx, cancel := context.WithCancel(context.Background())
	cs := &consumer{c: c, cb: cb, cancel: cancel, done: make(chan struct{})}
	cs.cond = sync.NewCond(&cs.mu)
	go cs.loop(loopCtx)
	return cs, nil
}

// ConsumerOptions are a consumer's options of subscription on topic,
// translated from the spec (see ProducerOptions).
func (d *Driver) ConsumerOptions(topic, subscription string) pulsar.ConsumerOptions {
	return d.settings.Consumer.options(topic, subscription)
}

func (cs *consumer) loop(ctx context.Context) {
	defer close(cs.done)
	for {
		// Do not take a message from the client while paused: it stays in
		// the receiver queue (and, past that, on the broker).
		if !cs.waitRunning() {
			return
		}
		msg, err := cs.c.Receive(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			// A closed consumer or a transient error: back off briefly
			// rather than spin.
			select {
			case <-ctx.Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		cs.deliver(msg)
	}
}

// waitRunning blocks while paused; false when the consumer is closed.
func (cs *consumer) waitRunning() bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for cs.paused && !cs.closed {
		cs.cond.Wait()
	}
	return !cs.closed
}

func (cs *consumer) deliver(msg pulsar.Message) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	// A Pause that came while Receive was waiting holds this message until
	// Resume, so no callback runs between Pause and Resume.
	for cs.paused && !cs.closed {
		cs.cond.Wait()
	}
	if cs.closed {
		return // not acknowledged: it is redelivered to the next consumer
	}
	partition := msg.ID().PartitionIdx()
	if partition < 0 {
		partition = 0 // a non-partitioned topic
	}
	cs.cb(driver.Message{Payload: msg.Payload(), PublishTime: msg.PublishTime(), Partition: partition})
	// The client groups acknowledgments (100 ms or 1000 acks by default),
	// as the Java client OMB uses does.
	_ = cs.c.Ack(msg)
}

// Pause stops delivery; it returns after any callback in progress ended.
// It must not be called from the callback.
func (cs *consumer) Pause() {
	cs.mu.Lock()
	cs.paused = true
	cs.mu.Unlock()
}

func (cs *consumer) Resume() {
	cs.mu.Lock()
	cs.paused = false
	cs.mu.Unlock()
	cs.cond.Broadcast()
}

// Close stops the loop and closes the consumer (pending acknowledgments are
// flushed by the client's close).
func (cs *consumer) Close() error {
	cs.closeOnce.Do(func() {
		cs.mu.Lock()
		cs.closed = true
		cs.mu.Unlock()
		cs.cond.Broadcast()
		cs.cancel()
		<-cs.done
		cs.c.Close()
	})
	return nil
}
