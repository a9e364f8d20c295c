package ombdriver

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/durability"
)

func eff(t *testing.T, system v1alpha1.System, level v1alpha1.Level) v1alpha1.EffectiveDurability {
	t.Helper()
	e, err := durability.Translate(system, v1alpha1.DurabilitySpec{Level: &level})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestParseProperties(t *testing.T) {
	got := ParseProperties("  acks=all\n# comment\n! also\nlinger.ms : 1\nbatch.size 131072\n\nclient.id=a=b\n")
	want := map[string]string{"acks": "all", "linger.ms": "1", "batch.size": "131072", "client.id": "a=b"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

const kafkaHead = "name: Kafka\ndriverClass: io.openmessaging.benchmark.driver.kafka.KafkaBenchmarkDriver\n"
const pulsarHead = "name: Pulsar\ndriverClass: io.openmessaging.benchmark.driver.pulsar.PulsarBenchmarkDriver\n"

func TestMap(t *testing.T) {
	tests := []struct {
		name    string
		system  v1alpha1.System
		level   v1alpha1.Level
		file    string
		want    *v1alpha1.DriverSpec
		dropped []string // keys of Dropped, in order
		err     []string // substrings of the error
	}{
		{
			name: "kafka: common config reaches producer and consumer, producer's wins", system: v1alpha1.SystemKafka, level: 2,
			file: kafkaHead + "replicationFactor: 3\ncommonConfig: |\n  bootstrap.servers=h:9092\n  client.id=common\nproducerConfig: |\n  client.id=prod\n  linger.ms=5\nconsumerConfig: |\n  max.partition.fetch.bytes=10485760\ntopicConfig: |\n  retention.ms=600000\n",
			want: &v1alpha1.DriverSpec{Kafka: &v1alpha1.KafkaDriver{
				Producer: map[string]string{"client.id": "prod", "linger.ms": "5"},
				Consumer: map[string]string{"client.id": "common", "max.partition.fetch.bytes": "10485760"},
				Topic:    map[string]string{"retention.ms": "600000"},
			}},
			dropped: []string{"commonConfig: bootstrap.servers"},
		},
		{
			name: "kafka: durability keys equal to the level are accepted", system: v1alpha1.SystemKafka, level: 2,
			file:    kafkaHead + "topicConfig: |\n  min.insync.replicas=2\nproducerConfig: |\n  acks=-1\n  enable.idempotence=true\n",
			want:    &v1alpha1.DriverSpec{Kafka: &v1alpha1.KafkaDriver{}},
			dropped: []string{"topicConfig: min.insync.replicas=2", "producerConfig: acks=-1", "producerConfig: enable.idempotence=true"},
		},
		{
			name: "kafka: acks that differ from the level are refused", system: v1alpha1.SystemKafka, level: 4,
			file: kafkaHead + "producerConfig: |\n  acks=all\n",
			err:  []string{"producerConfig: acks=all is set by spec.durability (which sets acks=1); remove it and choose the durability level instead"},
		},
		{
			name: "kafka: flush keys at a level without them are refused", system: v1alpha1.SystemKafka, level: 2,
			file: kafkaHead + "topicConfig: |\n  flush.messages=1\n",
			err:  []string{"topicConfig: flush.messages=1 is set by spec.durability (which does not set it at this level)", "choose the durability level instead"},
		},
		{
			name: "kafka: flush keys at level 1 are what it sets", system: v1alpha1.SystemKafka, level: 1,
			file:    kafkaHead + "topicConfig: |\n  flush.messages=1\n  flush.ms=0\n",
			want:    &v1alpha1.DriverSpec{Kafka: &v1alpha1.KafkaDriver{}},
			dropped: []string{"topicConfig: flush.messages=1", "topicConfig: flush.ms=0"},
		},
		{
			name: "kafka: replicationFactor must agree with the durability", system: v1alpha1.SystemKafka, level: 2,
			file: kafkaHead + "replicationFactor: 1\n",
			err:  []string{"replicationFactor 1 disagrees with spec.durability, whose replication factor is 3", "spec.durability.replication.replicas: 1"},
		},
		{
			name: "kafka: keys franz-go lacks are dropped with the reason", system: v1alpha1.SystemKafka, level: 2,
			file:    kafkaHead + "producerConfig: |\n  max.request.size=4194304\n",
			want:    &v1alpha1.DriverSpec{Kafka: &v1alpha1.KafkaDriver{}},
			dropped: []string{"producerConfig: max.request.size=4194304"},
		},
		{
			name: "a pulsar file for a kafka run is refused", system: v1alpha1.SystemKafka, level: 2,
			file: pulsarHead,
			err:  []string{"the driver file is OMB's pulsar driver", "spec.system is kafka"},
		},
		{
			name: "pulsar: sections map, OMB's names become the Go driver's", system: v1alpha1.SystemPulsar, level: 2,
			file: pulsarHead + "client:\n  serviceUrl: pulsar://h:6650\n  connectionsPerBroker: 4\n  ioThreads: 8\n  clientMemoryLimitMB: 64\n  persistence:\n    ensembleSize: 3\n    writeQuorum: 3\n    ackQuorum: 2\nproducer:\n  batchingEnabled: true\n  pendingQueueSize: 5000\nconsumer:\n  receiverQueueSize: 1000\n  subscriptionType: Failover\n",
			want: &v1alpha1.DriverSpec{Pulsar: &v1alpha1.PulsarDriver{
				Client:   map[string]string{"connectionsPerBroker": "4", "memoryLimitBytes": "67108864"},
				Producer: map[string]string{"batchingEnabled": "true", "maxPendingMessages": "5000"},
				Consumer: map[string]string{"receiverQueueSize": "1000", "subscriptionType": "Failover"},
			}},
			dropped: []string{"client: ioThreads=8", "client: persistence.ackQuorum=2", "client: persistence.ensembleSize=3", "client: persistence.writeQuorum=3", "client: serviceUrl"},
		},
		{
			name: "pulsar: a quorum other than the durability's is refused", system: v1alpha1.SystemPulsar, level: 4,
			file: pulsarHead + "client:\n  persistence:\n    ackQuorum: 2\n",
			err:  []string{"client.persistence.ackQuorum=2 is set by spec.durability (which sets 1); remove it and choose the durability level instead"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse([]byte(tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got, dropped, err := Map(f, tt.system, eff(t, tt.system, tt.level))
			if len(tt.err) > 0 {
				if err == nil {
					t.Fatalf("accepted, want an error with %q", tt.err)
				}
				for _, w := range tt.err {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v / %+v, want %+v / %+v", got.Kafka, got.Pulsar, tt.want.Kafka, tt.want.Pulsar)
			}
			var keys []string
			for _, d := range dropped {
				keys = append(keys, d.Key)
				if d.Why == "" {
					t.Errorf("%s dropped without a reason", d.Key)
				}
			}
			if !reflect.DeepEqual(keys, tt.dropped) {
				t.Errorf("dropped %q, want %q", keys, tt.dropped)
			}
		})
	}
}

func TestParseRefusesUnknownKeys(t *testing.T) {
	_, err := Parse([]byte(kafkaHead + "producerConfg: |\n  linger.ms=1\n"))
	if err == nil || !strings.Contains(err.Error(), `unknown key "producerConfg"`) {
		t.Fatalf("want the misspelt key named, got %v", err)
	}
	if _, err := Parse([]byte("name: X\ndriverClass: io.openmessaging.benchmark.driver.rabbitmq.RabbitMqBenchmarkDriver\n")); err == nil {
		t.Fatal("a RabbitMQ driver file was accepted")
	}
}

func TestMerge(t *testing.T) {
	file := &v1alpha1.DriverSpec{Kafka: &v1alpha1.KafkaDriver{Producer: map[string]string{"linger.ms": "1", "batch.size": "131072"}}}
	spec := &v1alpha1.DriverSpec{Kafka: &v1alpha1.KafkaDriver{Producer: map[string]string{"linger.ms": "5"}}}
	got := Merge(file, spec)
	if want := map[string]string{"linger.ms": "5", "batch.size": "131072"}; !reflect.DeepEqual(got.Kafka.Producer, want) {
		t.Errorf("merged producer %v, want %v", got.Kafka.Producer, want)
	}
	if file.Kafka.Producer["linger.ms"] != "1" {
		t.Error("Merge changed its input")
	}
}

// TestOMBDriverCorpus maps OMB's own driver files (testdata/omb, see its
// README) for a run at OMB's durability (level 2: acks=all,
// min.insync.replicas=2, RF 3; Pulsar 3/3/2). kafka-sync.yaml's flush keys
// belong to level 1 and are refused at level 2 with the durability message.
func TestOMBDriverCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "omb", "driver-*", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 9 {
		t.Fatalf("corpus holds %d driver files, want 9", len(files))
	}
	refusedAt2 := map[string]string{"kafka-sync.yaml": "topicConfig: flush.messages=1 is set by spec.durability"}
	// astra.yaml reaches Astra Streaming with TLS and a token: a cluster
	// takes neither from a driver file (TestAstraLocally maps it).
	refusedInCluster := map[string]string{"astra.yaml": "a driver file's security settings are not read in a cluster"}
	mapped := 0
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := Parse(data)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		name := filepath.Base(p)
		got, dropped, err := Map(f, f.System, eff(t, f.System, 2))
		if want, ok := refusedInCluster[name]; ok {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s in a cluster: want refusal %q, got %v", name, want, err)
			}
			continue
		}
		if want, ok := refusedAt2[name]; ok {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s at level 2: want refusal %q, got %v", name, want, err)
			}
			// At level 1 (what the file is for) it maps.
			if _, _, err := Map(f, f.System, eff(t, f.System, 1)); err != nil {
				t.Errorf("%s at level 1: %v", name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		mapped++
		// OMB's files always name the brokers; they must be dropped, not kept.
		found := false
		for _, d := range dropped {
			found = found || strings.Contains(d.Key, "bootstrap.servers") || strings.Contains(d.Key, "serviceUrl")
		}
		if !found {
			t.Errorf("%s: the broker address was not dropped: %v", name, dropped)
		}
		if f.System == v1alpha1.SystemKafka && got.Kafka.Producer["batch.size"] == "" {
			t.Errorf("%s: producerConfig batch.size was lost: %+v", name, got.Kafka)
		}
		if f.System == v1alpha1.SystemPulsar && got.Pulsar.Producer["batchingEnabled"] != "true" {
			t.Errorf("%s: producer.batchingEnabled was lost: %+v", name, got.Pulsar)
		}
	}
	t.Logf("%d of %d OMB driver files map at level 2", mapped, len(files))
}

// TestAstraLocally: OMB's astra.yaml in local mode. Its token is a
// ${astraToken} placeholder for OMB's deployment scripts, refused as
// such; substituted, the file maps: TLS (its service URL is pulsar+ssl://)
// without hostname verification, as the file says, and token
// authentication; its client settings are the same as without them.
func TestAstraLocally(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "omb", "driver-pulsar", "astra.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	level := eff(t, v1alpha1.SystemPulsar, 2)
	f, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := MapWithSecurity(f, v1alpha1.SystemPulsar, level); err == nil || !strings.Contains(err.Error(), "client: authentication.data: the token holds a ${...} placeholder") {
		t.Fatalf("the placeholder token: %v", err)
	}
	f, err = Parse([]byte(strings.ReplaceAll(string(data), "${astraToken}", "eyJhbGciOiJSUzI1NiJ9.payload.sig")))
	if err != nil {
		t.Fatal(err)
	}
	drv, sec, _, err := MapWithSecurity(f, v1alpha1.SystemPulsar, level)
	if err != nil {
		t.Fatal(err)
	}
	if sec == nil || sec.Protocol != "pulsar+ssl" || sec.Mechanism != "Token" || sec.TLS == nil || !sec.TLS.SkipHostnameVerification || sec.TLS.InsecureSkipVerify || sec.TLS.Trust != nil {
		t.Fatalf("astra.yaml's security: %+v %+v", sec, sec.TLS)
	}
	if drv.Pulsar.Producer["maxPendingMessages"] != "10000" || drv.Pulsar.Client["connectionsPerBroker"] != "8" {
		t.Errorf("astra.yaml's client settings: %+v", drv.Pulsar)
	}
}
