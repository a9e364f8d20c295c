package kafka

import (
	"slices"
	"strings"
	"testing"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
)

func TestFollowers(t *testing.T) {
	p := PartitionState{Leader: 2, Replicas: []int32{3, 2, 1}}
	if got := p.Followers(); !slices.Equal(got, []int32{3, 1}) || !slices.Equal(p.Replicas, []int32{3, 2, 1}) {
		t.Errorf("followers %v of %v (leader 2), want [3 1] and the replicas unchanged", got, p.Replicas)
	}
}

// TestLookupPartition asks the package's three brokers who serves a
// topic the driver made: the same topic name the driver gives, a leader
// among three in-sync replicas, and the same answer kadm gives the driver.
func TestLookupPartition(t *testing.T) {
	ctx := testCtx(t)
	d := newDriver(t, effective(t, v1alpha1.Level2), nil)
	if d.TopicName(0) != RunTopic(d.cfg.RunID, 0) {
		t.Fatalf("RunTopic %s, the driver's TopicName %s", RunTopic(d.cfg.RunID, 0), d.TopicName(0))
	}
	if err := d.CreateTopics(ctx, []driver.Topic{{Name: d.TopicName(0), Partitions: 2}}); err != nil {
		t.Fatal(err)
	}
	k := kafkaCluster(t)
	got, err := LookupPartition(ctx, k.Bootstrap(), nil, d.TopicName(0), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Replicas) != 3 || len(got.ISR) != 3 || !slices.Contains(got.Replicas, got.Leader) || len(got.Followers()) != 2 {
		t.Errorf("partition 1: %+v, want a leader among 3 in-sync replicas", got)
	}
	details, err := d.adm.ListTopics(ctx, d.TopicName(0))
	if err != nil {
		t.Fatal(err)
	}
	if want := details[d.TopicName(0)].Partitions[1].Leader; got.Leader != want {
		t.Errorf("leader %d, the driver's admin client says %d", got.Leader, want)
	}
	if _, err := LookupPartition(ctx, k.Bootstrap(), nil, d.TopicName(0), 2); err == nil || !strings.Contains(err.Error(), "no partition 2") {
		t.Errorf("partition 2 of 2: %v, want an error naming it", err)
	}
	if _, err := LookupPartition(ctx, k.Bootstrap(), nil, RunTopic("nothere", 0), 0); err == nil || !strings.Contains(err.Error(), "not known") {
		t.Errorf("a topic that does not exist: %v, want an error saying so", err)
	}
}
