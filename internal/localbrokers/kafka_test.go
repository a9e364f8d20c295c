package localbrokers

import (
	"context"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestKafkaNodeProperties(t *testing.T) {
	tests := []struct {
		name    string
		id, n   int
		extra   map[string]string
		want    []string
		wantNot []string
	}{
		{
			name: "node 1 is controller and broker with a dynamic quorum",
			id:   1, n: 3,
			want: []string{
				"process.roles=broker,controller\n",
				"controller.quorum.bootstrap.servers=127.0.0.1:9300\n",
				"listeners=PLAINTEXT://127.0.0.1:9101,CONTROLLER://127.0.0.1:9300\n",
				"offsets.topic.replication.factor=3\n",
			},
			wantNot: []string{"controller.quorum.voters"},
		},
		{
			name: "other nodes are brokers only",
			id:   2, n: 3,
			want:    []string{"process.roles=broker\n", "listeners=PLAINTEXT://127.0.0.1:9101\n", "node.id=2\n"},
			wantNot: []string{"CONTROLLER://"},
		},
		{
			name: "internal topics fit a 1-node cluster",
			id:   1, n: 1,
			want: []string{"offsets.topic.replication.factor=1\n", "transaction.state.log.min.isr=1\n"},
		},
		{
			name: "durability broker config is applied, owned keys are not",
			id:   2, n: 3,
			extra:   map[string]string{"log.flush.interval.messages": "1", "node.id": "9"},
			want:    []string{"log.flush.interval.messages=1\n", "node.id=2\n"},
			wantNot: []string{"node.id=9"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := KafkaNodeProperties(tt.id, 9101, 9300, tt.n, "/data", tt.extra)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in:\n%s", w, got)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(got, w) {
					t.Errorf("unexpected %q in:\n%s", w, got)
				}
			}
		})
	}
}

func TestKafkaControllerSettings(t *testing.T) {
	got := properties("", kafkaControllerSettings(4, 9300, 3, "/data", map[string]string{"min.insync.replicas": "2", "node.id": "9"}))
	for _, w := range []string{"process.roles=controller\n", "node.id=4\n", "listeners=CONTROLLER://127.0.0.1:9300\n",
		"controller.quorum.bootstrap.servers=127.0.0.1:9300\n", "min.insync.replicas=2\n"} {
		if !strings.Contains(got, w) {
			t.Errorf("missing %q in:\n%s", w, got)
		}
	}
	// A broker listener or the inter-broker one would make Kafka refuse a
	// controller-only node.
	for _, w := range []string{"PLAINTEXT://", "inter.broker.listener.name", "node.id=9"} {
		if strings.Contains(got, w) {
			t.Errorf("unexpected %q in:\n%s", w, got)
		}
	}
	if b := properties("", kafkaNodeSettingsRoles(1, 9101, 9300, 3, "/data", nil, false)); !strings.Contains(b, "process.roles=broker\n") || strings.Contains(b, "CONTROLLER://") {
		t.Errorf("node 1 beside a controller of its own is not a broker only:\n%s", b)
	}
}

// TestKafkaSeparateControllerSurvivesNode1 kills node 1 of a cluster whose
// controller runs apart: the controller moves partition 0's leadership and
// the ISR off it, which a cluster whose node 1 is the controller could
// never do again.
func TestKafkaSeparateControllerSurvivesNode1(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	k, err := StartKafka(ctx, KafkaOptions{Brokers: 3, Log: t.Logf, SeparateController: true})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Stop()
	if k.Controller == nil || k.Controller.Process.Name != "kafka-controller" || k.Controller.ID != 4 || len(k.Pids()) != 4 || k.Pids()[3] != k.Controller.Process.Pid {
		t.Fatalf("controller %+v, pids %v: want kafka-controller, node 4, the last of 4 pids", k.Controller, k.Pids())
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(k.Bootstrap(), ",")...), kgo.MetadataMinAge(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if bs, err := adm.ListBrokers(ctx); err != nil || len(bs) != 3 {
		t.Fatalf("ListBrokers = %v, %v; want the 3 brokers, not the controller", bs, err)
	}
	// Node 1 leads partition 0: its replicas are listed from it, and the
	// first replica is the one elected.
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "lb-ctl", -1, -1
	ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
	ra.Partition, ra.Replicas = 0, []int32{1, 2, 3}
	rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 30000
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if err := kerr.ErrorForCode(resp.Topics[0].ErrorCode); err != nil {
		t.Fatalf("creating lb-ctl led by node 1: %v", err)
	}
	for {
		td, err := adm.ListTopics(ctx, "lb-ctl")
		if p, ok := td["lb-ctl"].Partitions[0]; err == nil && ok && p.Leader == 1 && len(p.ISR) == 3 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("lb-ctl never led by node 1 with 3 in sync: %+v %v", td, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := syscall.Kill(k.Nodes[0].Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		td, err := adm.ListTopics(ctx, "lb-ctl")
		if err == nil {
			if p, ok := td["lb-ctl"].Partitions[0]; ok && p.Leader > 1 && !slices.Contains(p.ISR, 1) {
				t.Logf("partition 0 after node 1 was killed: leader %d, ISR %v", p.Leader, p.ISR)
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("partition 0 still on node 1 90 s after it was killed: %+v %v", td, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func TestStartKafkaRefusesOwnedKeys(t *testing.T) {
	_, err := StartKafka(context.Background(), KafkaOptions{BrokerConfig: map[string]string{"listeners": "x"}})
	if err == nil || !strings.Contains(err.Error(), `BrokerConfig["listeners"]`) {
		t.Fatalf("want an error naming BrokerConfig[\"listeners\"], got %v", err)
	}
}

// TestStartKafkaThreeBrokers starts a real 3-node KRaft cluster, checks that
// all brokers registered, that a topic with RF 3 and min ISR 2 accepts
// acks=all writes, and that Stop ends every JVM.
func TestStartKafkaThreeBrokers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	k, err := StartKafka(ctx, KafkaOptions{Brokers: 3, Log: t.Logf,
		BrokerConfig: map[string]string{"log.flush.interval.messages": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("3-broker cluster ready in %s", time.Since(start).Round(time.Millisecond))
	defer k.Stop()

	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(k.Bootstrap(), ",")...), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	bs, err := adm.ListBrokers(ctx)
	if err != nil || len(bs) != 3 {
		t.Fatalf("ListBrokers = %v, %v; want 3 brokers", bs, err)
	}
	// The broker config reached every node.
	bc, err := adm.DescribeBrokerConfigs(ctx, 1, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, rc := range bc {
		if v := configValue(rc, "log.flush.interval.messages"); v != "1" {
			t.Errorf("broker %s: log.flush.interval.messages = %q (err %v), want 1", rc.Name, v, rc.Err)
		}
	}
	resp, err := adm.CreateTopic(ctx, 3, 3, map[string]*string{"min.insync.replicas": kadm.StringPtr("2")}, "lb-test")
	if err != nil || resp.Err != nil {
		t.Fatalf("CreateTopic: %v %v", err, resp.Err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "lb-test", Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatalf("acks=all produce on RF 3 / min ISR 2: %v", err)
	}
	cl.Close()

	pids := k.Pids()
	stopStart := time.Now()
	if err := k.Stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("stopped in %s", time.Since(stopStart).Round(time.Millisecond))
	if err := k.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	for _, pid := range pids {
		if PidAlive(pid) {
			t.Errorf("pid %d still alive after Stop", pid)
		}
	}
}

func configValue(rc kadm.ResourceConfig, key string) string {
	for _, c := range rc.Configs {
		if c.Key == key {
			return c.MaybeValue()
		}
	}
	return "(absent)"
}

func TestKafkaUUIDNeverLooksLikeAnOption(t *testing.T) {
	for i := 0; i < 2000; i++ {
		id, err := kafkaUUID()
		if err != nil {
			t.Fatal(err)
		}
		if len(id) != 22 || id[0] == '-' {
			t.Fatalf("cluster id %q: want 22 characters not starting with '-'", id)
		}
	}
}
