package experiment

// Stalls on Kafka: a follower of the test partition stopped (SIGSTOP)
// under load, on a local cluster of three brokers.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/localbrokers"
)

func runKafkaStalls(ctx context.Context, o StallOptions, cells []StallCell, dir, workerURL string, rec *recorder) (_ []StallResult, err error) {
	base, err := durability.Translate(v1alpha1.SystemKafka, v1alpha1.DurabilitySpec{Level: ptr.To(v1alpha1.Level2)})
	if err != nil {
		return nil, err
	}
	broker := map[string]string{
		"replica.lag.time.max.ms": strconv.FormatInt(o.LagMax.Milliseconds(), 10),
		// Above the past-lag stall (2 LagMax), so the controller does not
		// fence the stopped broker first (see StallOptions.LagMax).
		"broker.session.timeout.ms": strconv.FormatInt((3 * o.LagMax).Milliseconds(), 10),
	}
	for k, v := range base.Kafka.Broker {
		broker[k] = v
	}
	start := time.Now()
	k, err := localbrokers.StartKafka(ctx, localbrokers.KafkaOptions{BrokerConfig: broker, Version: o.Version, Dir: dir, Log: o.Log})
	if err != nil {
		return nil, err
	}
	defer func() {
		if serr := k.Stop(); serr != nil {
			err = errors.Join(err, fmt.Errorf("stopping Kafka: %w", serr))
		}
	}()
	o.Log("kafka %s ready in %s, replica.lag.time.max.ms %d", k.Version, time.Since(start).Round(time.Second), o.LagMax.Milliseconds())
	var out []StallResult
	for _, c := range cells {
		var brokers v1alpha1.BrokerEndpoints
		brokers.BootstrapServers = k.Bootstrap()
		r, err := runStall(ctx, o, c, brokers, k.Version, workerURL, rec, func(ctx context.Context, from time.Time) (StallResult, error) {
			return stallKafka(ctx, o, c, k, rec, from)
		})
		if err != nil {
			return out, fmt.Errorf("%s: %w", c.Name(), err)
		}
		out = append(out, r)
	}
	return out, nil
}

// stallKafka waits until Before after from (the measured phase's start),
// stops the partition's follower, reads the ISR while it is stopped,
// continues it after the cell's Stall and reads the ISR once more. The
// follower is always continued, also on error.
func stallKafka(ctx context.Context, o StallOptions, c StallCell, k *localbrokers.Kafka, rec *recorder, from time.Time) (StallResult, error) {
	var r StallResult
	if err := sleepUntil(ctx, from.Add(o.Before)); err != nil {
		return r, err
	}
	_, topics := rec.take()
	if len(topics) != 1 {
		return r, fmt.Errorf("the run has %d topics, want 1", len(topics))
	}
	topic := topics[0]
	leader, replicas, isr, err := partitionOf(ctx, k.Bootstrap(), topic)
	if err != nil {
		return r, err
	}
	r.Leader, r.ISRBefore = leader, isr
	node, live := follower(k, leader, replicas)
	if node == nil {
		return r, fmt.Errorf("topic %s: no follower among replicas %v (leader %d) is a local node", topic, replicas, leader)
	}
	r.Follower = int32(node.ID)

	pid := node.Process.Pid
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return r, fmt.Errorf("stopping node %d (pid %d): %w", node.ID, pid, err)
	}
	r.From = time.Now()
	continued := false
	cont := func() error {
		if continued {
			return nil
		}
		continued = true
		err := syscall.Kill(pid, syscall.SIGCONT)
		r.To = time.Now()
		return err
	}
	defer func() { _ = cont() }()
	if err := sleepUntil(ctx, r.From.Add(c.Stall-time.Second)); err != nil {
		return r, err
	}
	if _, _, isr, err := partitionOf(ctx, strings.Join(live, ","), topic); err == nil {
		r.ISRDuring = isr
	} else {
		o.Log("%s: reading the ISR during the stall: %v", c.Name(), err)
	}
	if err := sleepUntil(ctx, r.From.Add(c.Stall)); err != nil {
		return r, err
	}
	if err := cont(); err != nil {
		return r, fmt.Errorf("continuing node %d (pid %d): %w", node.ID, pid, err)
	}
	// After the stall: once the follower is back in the ISR, or 10 s on.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, _, isr, err := partitionOf(ctx, k.Bootstrap(), topic)
		if err == nil {
			r.ISRAfter = isr
			if slices.Contains(isr, r.Follower) {
				break
			}
		}
		if time.Now().After(deadline) {
			break
		}
		if err := sleepUntil(ctx, time.Now().Add(500*time.Millisecond)); err != nil {
			return r, err
		}
	}
	return r, nil
}

// follower picks the replica to stop: not the leader, and not node 1, the
// KRaft controller, where another follower exists (stopping the controller
// stalls the cluster's metadata too, another fault); and the addresses of
// the other nodes, which answer while it is stopped.
func follower(k *localbrokers.Kafka, leader int32, replicas []int32) (*localbrokers.KafkaNode, []string) {
	var node *localbrokers.KafkaNode
	for i := range k.Nodes {
		n := &k.Nodes[i]
		if int32(n.ID) == leader || !slices.Contains(replicas, int32(n.ID)) || n.Process == nil {
			continue
		}
		if node == nil || node.ID == 1 {
			node = n
		}
	}
	if node == nil {
		return nil, nil
	}
	addrs := strings.Split(k.Bootstrap(), ",")
	var live []string
	for i, n := range k.Nodes {
		if n.ID != node.ID && i < len(addrs) {
			live = append(live, addrs[i])
		}
	}
	return node, live
}

// partitionOf is partition 0 of topic as the brokers at bootstrap see it:
// its leader, replicas and in-sync replicas (sorted).
func partitionOf(ctx context.Context, bootstrap, topic string) (leader int32, replicas, isr []int32, err error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(bootstrap, ",")...), kgo.RequestTimeoutOverhead(2*time.Second))
	if err != nil {
		return 0, nil, nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	td, err := kadm.NewClient(cl).ListTopics(ctx, topic)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("describing topic %s: %w", topic, err)
	}
	t, ok := td[topic]
	if !ok || t.Err != nil {
		return 0, nil, nil, fmt.Errorf("describing topic %s: %v", topic, t.Err)
	}
	p, ok := t.Partitions[0]
	if !ok {
		return 0, nil, nil, fmt.Errorf("topic %s has no partition 0", topic)
	}
	if p.Err != nil {
		return 0, nil, nil, fmt.Errorf("topic %s partition 0: %w", topic, p.Err)
	}
	isr = slices.Clone(p.ISR)
	sort.Slice(isr, func(i, j int) bool { return isr[i] < isr[j] })
	return p.Leader, slices.Clone(p.Replicas), isr, nil
}
