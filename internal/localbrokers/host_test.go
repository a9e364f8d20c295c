package localbrokers

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestKafkaPropertiesOnHost(t *testing.T) {
	controller := KafkaNodeProperties(1, 9101, 9300, 3, "/data", nil)
	broker := KafkaNodeProperties(2, 9102, 9300, 3, "/data", nil)
	tests := []struct {
		name, props, host string
		want, notWant     []string
	}{
		{name: "no host keeps loopback", props: controller, host: "",
			want: []string{"listeners=PLAINTEXT://127.0.0.1:9101,CONTROLLER://127.0.0.1:9300\n"}},
		{name: "controller node: client listener moves, controller listener stays", props: controller, host: "10.244.0.1",
			want: []string{
				"listeners=PLAINTEXT://10.244.0.1:9101,CONTROLLER://127.0.0.1:9300\n",
				"advertised.listeners=PLAINTEXT://10.244.0.1:9101,CONTROLLER://127.0.0.1:9300\n",
				"controller.quorum.bootstrap.servers=127.0.0.1:9300\n",
			},
			notWant: []string{"PLAINTEXT://127.0.0.1"}},
		{name: "broker node advertises the host", props: broker, host: "10.244.0.1",
			want:    []string{"listeners=PLAINTEXT://10.244.0.1:9102\n", "advertised.listeners=PLAINTEXT://10.244.0.1:9102\n"},
			notWant: []string{"PLAINTEXT://127.0.0.1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := kafkaPropertiesOnHost(tt.props, tt.host)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in\n%s", w, got)
				}
			}
			for _, nw := range tt.notWant {
				if strings.Contains(got, nw) {
					t.Errorf("unexpected %q in\n%s", nw, got)
				}
			}
		})
	}
}

func TestCheckHost(t *testing.T) {
	tests := []struct {
		host    string
		wantErr bool
	}{
		{"", false}, {"10.244.0.1", false}, {"127.0.0.2", false},
		{"localhost", true}, {"::1", true}, {"10.244.0.1:9092", true},
	}
	for _, tt := range tests {
		err := checkHost("KafkaOptions.Host", tt.host)
		if (err != nil) != tt.wantErr {
			t.Errorf("checkHost(%q) = %v, want error %v", tt.host, err, tt.wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), "KafkaOptions.Host") {
			t.Errorf("error %q does not name the field", err)
		}
	}
}

func TestPulsarConfigOnHost(t *testing.T) {
	owned := map[string]string{}
	for k, v := range pulsarHostConfig("10.244.0.1") {
		owned[k] = v
	}
	conf, err := pulsarConfig(owned, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"bindAddress=10.244.0.1\n", "advertisedAddress=10.244.0.1\n"} {
		if !strings.Contains(conf, w) {
			t.Errorf("missing %q in\n%s", w, conf)
		}
	}
	if pulsarHostConfig("") != nil {
		t.Error("no host must leave the loopback defaults")
	}
	p := &Pulsar{BrokerPort: 6650, WebPort: 8080, host: "10.244.0.1"}
	if p.ServiceURL() != "pulsar://10.244.0.1:6650" || p.AdminURL() != "http://10.244.0.1:8080" {
		t.Errorf("endpoints %s %s do not use the host", p.ServiceURL(), p.AdminURL())
	}
}

// A real broker on another loopback address (Linux routes all of
// 127.0.0.0/8 to lo): a client that bootstraps there must be told the same
// address in the metadata, or a pod would be sent to its own loopback.
func TestStartKafkaOnHost(t *testing.T) {
	if err := CheckJava(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	k, err := StartKafka(ctx, KafkaOptions{Brokers: 1, Host: "127.0.0.2", Log: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := k.Stop(); err != nil {
			t.Error(err)
		}
	}()
	if !strings.HasPrefix(k.Bootstrap(), "127.0.0.2:") {
		t.Fatalf("Bootstrap() = %s, want the host 127.0.0.2", k.Bootstrap())
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.Bootstrap()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	md, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(md.Brokers) != 1 || md.Brokers[0].Host != "127.0.0.2" {
		t.Fatalf("metadata brokers %+v, want one broker advertised at 127.0.0.2", md.Brokers)
	}
}
