package kafka

// These tests run against a real 3-broker KRaft cluster (local JVMs from
// Maven Central jars, internal/localbrokers), started once for the package
// by the first test that needs it and always stopped by TestMain. Beside
// its plaintext listener it has the secured ones of security_test.go, so
// the package starts one cluster.

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/localbrokers"
)

var (
	clusterOnce sync.Once
	cluster     *localbrokers.Kafka
	clusterErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if cluster != nil {
		if err := cluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping local kafka:", err)
			code = 1
		}
	}
	fixture.close()
	os.Exit(code)
}

// kafkaCluster starts the package's cluster with the level 2 broker
// defaults (default RF 3, min ISR 2), as a managed cluster would get.
func kafkaCluster(t *testing.T) *localbrokers.Kafka {
	t.Helper()
	brokerConfig := effective(t, v1alpha1.Level2).Kafka.Broker
	clusterOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		start := time.Now()
		var listeners []localbrokers.KafkaListener
		if listeners, clusterErr = fixture.listeners(); clusterErr != nil {
			return
		}
		cluster, clusterErr = localbrokers.StartKafka(ctx, localbrokers.KafkaOptions{
			Brokers:      3,
			BrokerConfig: brokerConfig,
			Listeners:    listeners,
		})
		if clusterErr == nil {
			t.Logf("3-broker Kafka %s ready at %s in %s", cluster.Version, cluster.Bootstrap(), time.Since(start).Round(time.Millisecond))
		}
	})
	if clusterErr != nil {
		t.Fatalf("starting local kafka: %v", clusterErr)
	}
	return cluster
}

var runSeq atomic.Int64

func newDriver(t *testing.T, eff v1alpha1.EffectiveDurability, over *v1alpha1.KafkaDriver) *Driver {
	t.Helper()
	k := kafkaCluster(t)
	cfg := driver.Config{
		System:     v1alpha1.SystemKafka,
		Brokers:    v1alpha1.BrokerEndpoints{BootstrapServers: k.Bootstrap()},
		Durability: eff,
		RunID:      fmt.Sprintf("t%d-%d", time.Now().UnixNano()%1e6, runSeq.Add(1)),
	}
	if over != nil {
		cfg.Overrides = &v1alpha1.DriverSpec{Kafka: over}
	}
	d, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := d.DeleteTopics(ctx); err != nil {
			t.Errorf("DeleteTopics: %v", err)
		}
		if err := d.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return d
}

func testCtx(t *testing.T) context.Context {
	// Generous: the bound only matters when something hangs, and the
	// shared 2-core machine can be very slow.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func configValue(rc kadm.ResourceConfig, key string) (string, bool) {
	for _, c := range rc.Configs {
		if c.Key == key {
			return c.MaybeValue(), true
		}
	}
	return "", false
}

// TestCreateTopicsAppliesDurability describes the created topics through the
// admin API: replication factor, ISR and configs are what the durability
// translation asked for, and a spec topic override is applied too.
func TestCreateTopicsAppliesDurability(t *testing.T) {
	const kafkaDefaultFlush = "9223372036854775807" // Long.MAX_VALUE: flush left to the OS
	tests := []struct {
		level      v1alpha1.Level
		wantConfig map[string]string
	}{
		{v1alpha1.Level1, map[string]string{"min.insync.replicas": "2", "flush.messages": "1", "flush.ms": "0", "unclean.leader.election.enable": "false", "retention.ms": "600000"}},
		{v1alpha1.Level2, map[string]string{"min.insync.replicas": "2", "flush.messages": kafkaDefaultFlush, "flush.ms": kafkaDefaultFlush, "unclean.leader.election.enable": "false", "retention.ms": "600000"}},
		{v1alpha1.Level4, map[string]string{"min.insync.replicas": "2", "flush.messages": kafkaDefaultFlush, "flush.ms": kafkaDefaultFlush, "retention.ms": "600000"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("level %d", tt.level), func(t *testing.T) {
			ctx := testCtx(t)
			d := newDriver(t, effective(t, tt.level), &v1alpha1.KafkaDriver{Topic: map[string]string{"retention.ms": "600000"}})
			topics := []driver.Topic{{Name: d.TopicName(0), Partitions: 3}, {Name: d.TopicName(1), Partitions: 1}}
			if err := d.CreateTopics(ctx, topics); err != nil {
				t.Fatal(err)
			}
			details, err := d.adm.ListTopics(ctx, d.TopicName(0), d.TopicName(1))
			if err != nil {
				t.Fatal(err)
			}
			for _, tp := range topics {
				td := details[tp.Name]
				if len(td.Partitions) != int(tp.Partitions) {
					t.Errorf("%s has %d partitions, want %d", tp.Name, len(td.Partitions), tp.Partitions)
				}
				for _, p := range td.Partitions {
					if len(p.Replicas) != 3 || len(p.ISR) != 3 {
						t.Errorf("%s/%d: replicas %v ISR %v, want 3 of each (replication factor 3)", tp.Name, p.Partition, p.Replicas, p.ISR)
					}
				}
			}
			rcs, err := d.adm.DescribeTopicConfigs(ctx, d.TopicName(0), d.TopicName(1))
			if err != nil {
				t.Fatal(err)
			}
			for _, rc := range rcs {
				if rc.Err != nil {
					t.Fatalf("%s: %v", rc.Name, rc.Err)
				}
				for k, want := range tt.wantConfig {
					if got, _ := configValue(rc, k); got != want {
						t.Errorf("%s: %s = %q, want %q", rc.Name, k, got, want)
					}
				}
			}
		})
	}
}

// TestProducerAcksReachTheBroker reads the acks of the produce requests the
// brokers received, from their request log (kafka.request.logger, switched
// to TRACE, which logs request contents, for the test through the BROKER_LOGGER config resource): -1
// (all) for sync replication, 1 for async. (A write refused for lack of
// in-sync replicas would be the other proof, but Kafka 4 caps the effective
// min ISR at the replication factor, and stopping a broker of the shared
// cluster is not cheap.)
func TestProducerAcksReachTheBroker(t *testing.T) {
	tests := []struct {
		level    v1alpha1.Level
		wantAcks string
	}{
		{v1alpha1.Level2, `"acks":-1`},
		{v1alpha1.Level4, `"acks":1`},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("level %d", tt.level), func(t *testing.T) {
			ctx := testCtx(t)
			clientID := fmt.Sprintf("acks-probe-%d-%d", tt.level, time.Now().UnixNano())
			d := newDriver(t, effective(t, tt.level), &v1alpha1.KafkaDriver{Producer: map[string]string{"client.id": clientID}})
			if err := d.CreateTopics(ctx, []driver.Topic{{Name: d.TopicName(0), Partitions: 1}}); err != nil {
				t.Fatal(err)
			}
			p, err := d.CreateProducer(ctx, d.TopicName(0))
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			setRequestLogLevel(t, d, "TRACE")
			defer setRequestLogLevel(t, d, "WARN")
			errc := make(chan error, 1)
			p.Send(ctx, nil, []byte("x"), driver.Tag{}, driver.AckFunc(func(err error) { errc <- err }))
			if err := p.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
			// The broker logs a request after sending its response, so
			// the line may appear a little after the ack.
			lines := produceRequestLines(t, clientID, 30*time.Second)
			if len(lines) == 0 {
				t.Fatalf("no PRODUCE request from client %s in the brokers' request logs", clientID)
			}
			for _, l := range lines {
				if !strings.Contains(l, tt.wantAcks) {
					t.Errorf("produce request without %s:\n%s", tt.wantAcks, l)
				}
			}
		})
	}
}

// produceRequestLines are the request-log lines of clientID's produce
// requests, waiting up to timeout for the first.
func produceRequestLines(t *testing.T, clientID string, timeout time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var lines []string
		for _, f := range kafkaCluster(t).LogFiles() {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range strings.Split(string(b), "\n") {
				if strings.Contains(l, `"clientId":"`+clientID+`"`) && strings.Contains(l, `"requestApiKeyName":"PRODUCE"`) {
					lines = append(lines, l)
				}
			}
		}
		if len(lines) > 0 || time.Now().After(deadline) {
			return lines
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// setRequestLogLevel sets kafka.request.logger on every broker.
func setRequestLogLevel(t *testing.T, d *Driver, level string) {
	t.Helper()
	for _, n := range kafkaCluster(t).Nodes {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		res := kmsg.NewIncrementalAlterConfigsRequestResource()
		res.ResourceType = kmsg.ConfigResourceTypeBrokerLogger
		res.ResourceName = strconv.Itoa(n.ID)
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name = "kafka.request.logger"
		c.Op = kmsg.IncrementalAlterConfigOpSet
		c.Value = kmsg.StringPtr(level)
		res.Configs = append(res.Configs, c)
		req.Resources = append(req.Resources, res)
		resp, err := req.RequestWith(context.Background(), d.admin)
		if err == nil {
			err = kerr.ErrorForCode(resp.Resources[0].ErrorCode)
		}
		if err != nil {
			t.Fatalf("setting kafka.request.logger=%s on broker %d: %v", level, n.ID, err)
		}
	}
}

// TestCompressionReachesTheBroker reads the produced batches' compression
// attribute: none by default (as OMB's Java client, unlike kgo's snappy),
// lz4 when the spec asks.
func TestCompressionReachesTheBroker(t *testing.T) {
	tests := []struct {
		name  string
		over  map[string]string
		codec uint8 // Kafka's attribute: 0 none, 3 lz4
	}{
		{"default none", nil, 0},
		{"lz4 override", map[string]string{"compression.type": "lz4"}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			d := newDriver(t, effective(t, v1alpha1.Level2), &v1alpha1.KafkaDriver{Producer: tt.over})
			topic := d.TopicName(0)
			if err := d.CreateTopics(ctx, []driver.Topic{{Name: topic, Partitions: 1}}); err != nil {
				t.Fatal(err)
			}
			p, err := d.CreateProducer(ctx, topic)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			var sendErr atomic.Value
			for i := 0; i < 50; i++ {
				p.Send(ctx, nil, []byte(strings.Repeat("compressible ", 20)), driver.Tag{}, driver.AckFunc(func(err error) {
					if err != nil {
						sendErr.Store(err)
					}
				}))
			}
			if err := p.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if err, _ := sendErr.Load().(error); err != nil {
				t.Fatal(err)
			}
			raw, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(kafkaCluster(t).Bootstrap(), ",")...),
				kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			fs := raw.PollFetches(ctx)
			if errs := fs.Errors(); len(errs) > 0 {
				t.Fatal(errs[0].Err)
			}
			n := 0
			fs.EachRecord(func(r *kgo.Record) {
				n++
				if got := r.Attrs.CompressionType(); got != tt.codec {
					t.Fatalf("record %d compression %d, want %d", r.Offset, got, tt.codec)
				}
			})
			if n == 0 {
				t.Fatal("read no records back")
			}
		})
	}
}

// ackerFunc is a function as a driver.Acker that sees what the ack carries.
type ackerFunc func(payload []byte, tag driver.Tag, err error)

func (f ackerFunc) Acked(payload []byte, tag driver.Tag, err error) { f(payload, tag, err) }

// TestEveryAckedMessageOncePerSubscription sends keyed messages from two
// producers and reads them in two subscriptions: each subscription receives
// every acknowledged message exactly once, with its partition and a broker
// timestamp. Each ack carries back its own message's payload and tag.
func TestEveryAckedMessageOncePerSubscription(t *testing.T) {
	const perProducer = 3000
	ctx := testCtx(t)
	d := newDriver(t, effective(t, v1alpha1.Level2), nil)
	topic := d.TopicName(0)
	if err := d.CreateTopics(ctx, []driver.Topic{{Name: topic, Partitions: 4}}); err != nil {
		t.Fatal(err)
	}
	subs := []string{"sub-a", "sub-b"}
	counts := make([]*idCounter, len(subs))
	for i, s := range subs {
		counts[i] = newIDCounter()
		c, err := d.CreateConsumer(ctx, topic, s, counts[i].add)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	start := time.Now()
	acked := newIDCounter()
	var failed, misrouted atomic.Int64
	var wg sync.WaitGroup
	for pi := 0; pi < 2; pi++ {
		p, err := d.CreateProducer(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		wg.Add(1)
		go func(pi int) {
			defer wg.Done()
			for i := 0; i < perProducer; i++ {
				id := uint64(pi*perProducer + i)
				payload := make([]byte, 100)
				binary.BigEndian.PutUint64(payload, id)
				key := []byte(fmt.Sprintf("key-%d", id%16))
				tag := driver.Tag{int64(id), -int64(id)}
				p.Send(ctx, key, payload, tag, ackerFunc(func(got []byte, gotTag driver.Tag, err error) {
					if err != nil {
						failed.Add(1)
						return
					}
					if &got[0] != &payload[0] || gotTag != tag {
						misrouted.Add(1)
					}
					acked.add(driver.Message{Payload: payload})
				}))
			}
			if err := p.Flush(ctx); err != nil {
				t.Error(err)
			}
		}(pi)
	}
	wg.Wait()
	if failed.Load() != 0 {
		t.Fatalf("%d sends failed on a healthy cluster", failed.Load())
	}
	if n := misrouted.Load(); n != 0 {
		t.Errorf("%d acks came with another message's payload or tag than Send was given", n)
	}
	want := acked.snapshot()
	if len(want) != 2*perProducer {
		t.Fatalf("%d acknowledged, want %d", len(want), 2*perProducer)
	}
	for i, c := range counts {
		if !c.waitFor(ctx, len(want)) {
			t.Fatalf("%s received %d distinct of %d messages", subs[i], len(c.snapshot()), len(want))
		}
	}
	time.Sleep(time.Second) // let any duplicate arrive before counting
	for i, c := range counts {
		got := c.snapshot()
		for id := range want {
			if got[id] != 1 {
				t.Errorf("%s: message %d received %d times, want once", subs[i], id, got[id])
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d distinct ids, want %d", subs[i], len(got), len(want))
		}
		c.mu.Lock()
		if c.badPartition || c.oldestTime.Before(start.Add(-time.Minute)) || c.oldestTime.After(time.Now()) {
			t.Errorf("%s: partition out of range (%v) or publish time %v not near the run", subs[i], c.badPartition, c.oldestTime)
		}
		if len(c.partitions) != 4 {
			t.Errorf("%s: messages came from partitions %v, want all 4 (16 keys)", subs[i], c.partitions)
		}
		c.mu.Unlock()
	}
}

// TestPauseResume: after Pause returns no message is delivered, even while
// more are produced; Resume delivers the rest.
func TestPauseResume(t *testing.T) {
	ctx := testCtx(t)
	d := newDriver(t, effective(t, v1alpha1.Level2), nil)
	topic := d.TopicName(0)
	if err := d.CreateTopics(ctx, []driver.Topic{{Name: topic, Partitions: 2}}); err != nil {
		t.Fatal(err)
	}
	got := newIDCounter()
	c, err := d.CreateConsumer(ctx, topic, "sub", got.add)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p, err := d.CreateProducer(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	send := func(from, n int) {
		t.Helper()
		for i := from; i < from+n; i++ {
			payload := make([]byte, 8)
			binary.BigEndian.PutUint64(payload, uint64(i))
			p.Send(ctx, nil, payload, driver.Tag{}, driver.AckFunc(func(err error) {
				if err != nil {
					t.Errorf("send %d: %v", i, err)
				}
			}))
		}
		if err := p.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	send(0, 200)
	if !got.waitFor(ctx, 200) {
		t.Fatalf("before pause: received %d of 200", len(got.snapshot()))
	}
	c.Pause()
	atPause := got.total()
	send(200, 300)
	time.Sleep(2 * time.Second) // fetches would have delivered by now
	if n := got.total(); n != atPause {
		t.Fatalf("%d messages delivered while paused", n-atPause)
	}
	c.Resume()
	if !got.waitFor(ctx, 500) {
		t.Fatalf("after resume: received %d of 500", len(got.snapshot()))
	}
}

// TestDeleteTopicsLeavesNothing: every sb-<runid>- topic is gone from the
// metadata, other runs' topics are kept, and deleting twice is fine.
func TestDeleteTopicsLeavesNothing(t *testing.T) {
	ctx := testCtx(t)
	d := newDriver(t, effective(t, v1alpha1.Level2), nil)
	other := newDriver(t, effective(t, v1alpha1.Level2), nil)
	var topics []driver.Topic
	for i := 0; i < 3; i++ {
		topics = append(topics, driver.Topic{Name: d.TopicName(i), Partitions: 2})
	}
	if err := d.CreateTopics(ctx, topics); err != nil {
		t.Fatal(err)
	}
	if err := other.CreateTopics(ctx, []driver.Topic{{Name: other.TopicName(0), Partitions: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := d.DeleteTopics(ctx); err != nil {
		t.Fatal(err)
	}
	// Through a new client: d's own answers may come from its metadata
	// cache. DeleteTopics returned when no broker listed the topics any
	// more, so whichever broker the new client asks must not list them.
	fresh, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(kafkaCluster(t).Bootstrap(), ",")...))
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	all, err := kadm.NewClient(fresh).ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for name := range all {
		if strings.HasPrefix(name, d.topicPrefix()) {
			t.Errorf("topic %s left after DeleteTopics", name)
		}
	}
	// A broker's metadata cache may not list a topic created a moment ago
	// through another broker, so "missing" is only believed after it stays
	// missing: a deleted topic never comes back, a lagging cache catches up.
	kept := false
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		listed, err := d.adm.ListTopics(ctx, other.TopicName(0))
		if err != nil {
			t.Fatal(err)
		}
		if td, ok := listed[other.TopicName(0)]; ok && td.Err == nil {
			kept = true
			break
		}
	}
	if !kept {
		t.Errorf("another run's topic %s was deleted", other.TopicName(0))
	}
	if err := d.DeleteTopics(ctx); err != nil {
		t.Fatalf("second DeleteTopics: %v", err)
	}
}

// idCounter counts messages by the id in their first 8 payload bytes.
type idCounter struct {
	mu           sync.Mutex
	ids          map[uint64]int
	n            int
	partitions   map[int32]bool
	badPartition bool
	oldestTime   time.Time
	changed      chan struct{}
}

func newIDCounter() *idCounter {
	return &idCounter{ids: map[uint64]int{}, partitions: map[int32]bool{}, changed: make(chan struct{}, 1)}
}

func (c *idCounter) add(m driver.Message) {
	c.mu.Lock()
	c.ids[binary.BigEndian.Uint64(m.Payload)]++
	c.n++
	if c.n == 1 || m.PublishTime.Before(c.oldestTime) {
		c.oldestTime = m.PublishTime // a zero time would be the oldest
	}
	if m.Partition < 0 || m.Partition > 1<<20 {
		c.badPartition = true
	}
	c.partitions[m.Partition] = true
	c.mu.Unlock()
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

func (c *idCounter) snapshot() map[uint64]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[uint64]int, len(c.ids))
	for k, v := range c.ids {
		out[k] = v
	}
	return out
}

func (c *idCounter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// waitFor waits until n distinct ids arrived or ctx ends.
func (c *idCounter) waitFor(ctx context.Context, n int) bool {
	for {
		c.mu.Lock()
		have := len(c.ids)
		c.mu.Unlock()
		if have >= n {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-c.changed:
		case <-time.After(100 * time.Millisecond):
		}
	}
}
