package kafka

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streambench/streambench-operator/internal/driver"
)

// RunTopic is the name of topic i of the run with runID, as the driver's
// TopicName gives it, for those that look the run's topics up without a
// driver (local mode's fault injector resolving leader).
func RunTopic(runID string, i int) string { return fmt.Sprintf("%s%s-%d", TopicPrefix, runID, i) }

// PartitionState is who serves one partition, as the brokers' metadata
// says: node ids (node.id, KRaft).
type PartitionState struct {
	Leader   int32
	Replicas []int32
	ISR      []int32
}

// Followers are the replicas that do not lead.
func (p PartitionState) Followers() []int32 {
	return slices.DeleteFunc(slices.Clone(p.Replicas), func(id int32) bool { return id == p.Leader })
}

// LookupPartition asks the brokers at bootstrap (with sec, nil for
// plaintext) who serves topic's partition now. The client is new for each
// lookup, so the answer is the brokers' and not a cache's: a fault's
// leader is whoever leads at the fault's time. An error when the topic or
// the partition is not known, or the partition has no leader (an election
// under way).
func LookupPartition(ctx context.Context, bootstrap string, sec *driver.Security, topic string, partition int32) (PartitionState, error) {
	seeds := splitBrokers(bootstrap)
	if len(seeds) == 0 {
		return PartitionState{}, fmt.Errorf("no brokers to ask who leads %s-%d: the bootstrap servers are empty", topic, partition)
	}
	opts, _, err := ClientOpts(sec)
	if err != nil {
		return PartitionState{}, err
	}
	// A stopped broker (a paused process) accepts connections and never
	// answers; short dials and request deadlines let the client try
	// another seed within the caller's deadline.
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seeds...), kgo.DialTimeout(3 * time.Second),
		kgo.RequestTimeoutOverhead(3 * time.Second), kgo.MetadataMinAge(100 * time.Millisecond)}, opts...)...)
	if err != nil {
		return PartitionState{}, err
	}
	defer cl.Close()
	md, err := kadm.NewClient(cl).Metadata(ctx, topic)
	if err != nil {
		return PartitionState{}, fmt.Errorf("asking the brokers who leads %s-%d: %w", topic, partition, err)
	}
	t, ok := md.Topics[topic]
	if !ok || t.Err != nil {
		return PartitionState{}, fmt.Errorf("topic %s is not known to the brokers (%v)", topic, t.Err)
	}
	p, ok := t.Partitions[partition]
	if !ok {
		return PartitionState{}, fmt.Errorf("topic %s has no partition %d", topic, partition)
	}
	// LEADER_NOT_AVAILABLE comes with leader -1 while an election runs.
	if p.Leader < 0 {
		return PartitionState{}, fmt.Errorf("%s-%d has no leader now (an election under way: %v)", topic, partition, p.Err)
	}
	return PartitionState{Leader: p.Leader, Replicas: slices.Clone(p.Replicas), ISR: slices.Clone(p.ISR)}, nil
}
