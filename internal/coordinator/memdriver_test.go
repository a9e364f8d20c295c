package coordinator

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/streambench/streambench-operator/internal/driver"
)

// memBroker is an in-memory stand-in for a broker, used ONLY to prove what a
// real broker cannot be made to do on demand: lose or duplicate an
// acknowledged message, so the accounting must catch it; and to show the
// order of the coordinator's own steps (the page-cache drop before the
// drain, pagecache_test.go), which does not depend on the broker. Every
// other test of this package runs against real Kafka and Pulsar.
type memBroker struct {
	mu     sync.Mutex
	cond   *sync.Cond
	topics map[string]*memTopic
	// dropEvery > 0 acknowledges every n-th message without storing it;
	// dupEvery > 0 stores every n-th message twice.
	dropEvery, dupEvery int
	n                   int
	// failDeletes > 0 fails that many topic deletions first, as a broker
	// that is not ready at the cleanup (a coordinator's step, not a
	// broker's behaviour, is under test).
	failDeletes int
	deletes     int
}

type memTopic struct {
	log  [][]byte
	subs map[string]*int // subscription cursor
}

func newMemBroker() *memBroker {
	b := &memBroker{topics: map[string]*memTopic{}}
	b.cond = sync.NewCond(&b.mu)
	return b
}

func (b *memBroker) factory(ctx context.Context, cfg driver.Config) (driver.Driver, error) {
	return &memDriver{b: b, runID: cfg.RunID}, nil
}

type memDriver struct {
	b     *memBroker
	runID string
	made  []string
}

func (d *memDriver) TopicName(i int) string { return fmt.Sprintf("%s-topic-%d", d.runID, i) }

func (d *memDriver) CreateTopics(_ context.Context, ts []driver.Topic) error {
	d.b.mu.Lock()
	defer d.b.mu.Unlock()
	for _, t := range ts {
		d.b.topics[t.Name] = &memTopic{subs: map[string]*int{}}
		d.made = append(d.made, t.Name)
	}
	return nil
}

func (d *memDriver) DeleteTopics(context.Context) error {
	d.b.mu.Lock()
	defer d.b.mu.Unlock()
	d.b.deletes++
	if d.b.deletes <= d.b.failDeletes {
		return fmt.Errorf("unable to dial: connection refused (memBroker, deletion %d)", d.b.deletes)
	}
	for _, t := range d.made {
		delete(d.b.topics, t)
	}
	return nil
}

func (d *memDriver) Close() error { return nil }

func (d *memDriver) CreateProducer(_ context.Context, topic string) (driver.Producer, error) {
	return &memProducer{b: d.b, topic: topic}, nil
}

type memProducer struct {
	b     *memBroker
	topic string
	wg    sync.WaitGroup
}

func (p *memProducer) Send(_ context.Context, _, payload []byte, tag driver.Tag, onAck driver.Acker) {
	b := p.b
	b.mu.Lock()
	t := b.topics[p.topic]
	b.n++
	cp := append([]byte(nil), payload...)
	drop := b.dropEvery > 0 && b.n%b.dropEvery == 0 && b.n > 100
	if t != nil && !drop {
		t.log = append(t.log, cp)
		if b.dupEvery > 0 && b.n%b.dupEvery == 0 {
			t.log = append(t.log, cp)
		}
	}
	b.cond.Broadcast()
	b.mu.Unlock()
	p.wg.Add(1)
	go func() { defer p.wg.Done(); onAck.Acked(payload, tag, nil) }()
}

func (p *memProducer) Flush(context.Context) error { p.wg.Wait(); return nil }
func (p *memProducer) Close() error                { p.wg.Wait(); return nil }

type memConsumer struct {
	b      *memBroker
	mu     sync.Mutex
	paused bool
	done   chan struct{}
	wg     sync.WaitGroup
}

func (d *memDriver) CreateConsumer(_ context.Context, topic, sub string, cb driver.ConsumerCallback) (driver.Consumer, error) {
	b := d.b
	b.mu.Lock()
	t := b.topics[topic]
	if t == nil {
		b.mu.Unlock()
		return nil, fmt.Errorf("topic %s does not exist", topic)
	}
	cur := t.subs[sub]
	if cur == nil {
		cur = new(int)
		t.subs[sub] = cur
	}
	b.mu.Unlock()
	c := &memConsumer{b: b, done: make(chan struct{})}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		for {
			select {
			case <-c.done:
				return
			default:
			}
			c.mu.Lock()
			paused := c.paused
			c.mu.Unlock()
			var msg []byte
			b.mu.Lock()
			if !paused && *cur < len(t.log) {
				msg = t.log[*cur]
				*cur++
			}
			b.mu.Unlock()
			if msg == nil {
				time.Sleep(time.Millisecond)
				continue
			}
			cb(driver.Message{Payload: msg, PublishTime: time.Now()})
		}
	}()
	return c, nil
}

func (c *memConsumer) Pause()  { c.mu.Lock(); c.paused = true; c.mu.Unlock() }
func (c *memConsumer) Resume() { c.mu.Lock(); c.paused = false; c.mu.Unlock() }
func (c *memConsumer) Close() error {
	close(c.done)
	c.wg.Wait()
	return nil
}

// unread is, summed over the broker's topics, how many messages the
// most-behind subscription of each topic has not read yet: the backlog a
// paused subscription has to drain.
func (b *memBroker) unread() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, t := range b.topics {
		most := 0
		for _, cur := range t.subs {
			most = max(most, len(t.log)-*cur)
		}
		n += most
	}
	return n
}
