package localbrokers

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
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
