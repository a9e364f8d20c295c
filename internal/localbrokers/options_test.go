package localbrokers

import (
	"strings"
	"testing"
	"time"
)

// TestStartOptionsDefaultAlike: StartKafka and StartPulsar default their
// shared options the same way, before any JVM starts.
func TestStartOptionsDefaultAlike(t *testing.T) {
	k := KafkaOptions{}
	if err := k.defaults(); err != nil {
		t.Fatal(err)
	}
	if k.Brokers != 3 || k.Version != DefaultKafkaVersion || k.ReadyTimeout != 4*time.Minute || k.Log == nil {
		t.Errorf("kafka defaults: brokers %d, version %q, ready %v, log set %t", k.Brokers, k.Version, k.ReadyTimeout, k.Log != nil)
	}
	p := PulsarOptions{Version: "4.0.6", ReadyTimeout: time.Minute}
	if err := p.defaults(); err != nil {
		t.Fatal(err)
	}
	if p.Bookies != 3 || p.Version != "4.0.6" || p.ReadyTimeout != time.Minute || p.Log == nil {
		t.Errorf("pulsar defaults: bookies %d, version %q, ready %v, log set %t", p.Bookies, p.Version, p.ReadyTimeout, p.Log != nil)
	}
	for _, c := range []struct {
		err  error
		want string
	}{
		{(&KafkaOptions{Brokers: -1}).defaults(), "KafkaOptions.Brokers (-1) must be at least 1"},
		{(&PulsarOptions{Bookies: -2}).defaults(), "PulsarOptions.Bookies (-2) must be at least 1"},
		{(&KafkaOptions{Host: "not a host"}).defaults(), "KafkaOptions.Host"},
		{(&PulsarOptions{Host: "not a host"}).defaults(), "PulsarOptions.Host"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("got %v, want an error with %q", c.err, c.want)
		}
	}
}
