package localbrokers

import (
	"context"
	"strings"
	"testing"
)

// The standalone reads one file as the broker's configuration and as every
// bookie's base configuration, so both maps land in it, and StartPulsar's
// own keys win over everything.
func TestPulsarConfigMergesBrokerAndBookie(t *testing.T) {
	conf, err := pulsarConfig(
		map[string]string{"brokerServicePort": "1234", "webServicePort": "5678"},
		map[string]string{"managedLedgerNewEntriesCheckDelayInMillis": "0", "managedLedgerDefaultAckQuorum": "1"},
		map[string]string{"journalSyncData": "false", "journalWriteData": "true"},
	)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"brokerServicePort=1234\n", "webServicePort=5678\n",
		"managedLedgerNewEntriesCheckDelayInMillis=0\n",
		// BrokerConfig overrides the base's 2.
		"managedLedgerDefaultAckQuorum=1\n",
		"journalSyncData=false\n", "journalWriteData=true\n",
		"clusterName=standalone\n", "bindAddress=127.0.0.1\n",
	} {
		if !strings.Contains(conf, want) {
			t.Errorf("config lacks %q:\n%s", want, conf)
		}
	}
	if strings.Count(conf, "managedLedgerDefaultAckQuorum=") != 1 {
		t.Errorf("managedLedgerDefaultAckQuorum appears more than once:\n%s", conf)
	}
}

func TestPulsarConfigRefuses(t *testing.T) {
	tests := []struct {
		name           string
		broker, bookie map[string]string
		want           string
	}{
		{"owned broker key", map[string]string{"brokerServicePort": "6650"}, nil, "PulsarOptions.BrokerConfig may not set brokerServicePort"},
		{"owned bookie key", nil, map[string]string{"journalDirectory": "/x"}, "PulsarOptions.BookieConfig may not set journalDirectory"},
		{"one key, two values", map[string]string{"journalSyncData": "true"}, map[string]string{"journalSyncData": "false"}, `journalSyncData is "false" in BookieConfig but "true" in BrokerConfig`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := pulsarConfig(nil, tt.broker, tt.bookie)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("pulsarConfig = %v; want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestStartPulsarRefusesBadOptionsBeforeFetching(t *testing.T) {
	_, err := StartPulsar(context.Background(), PulsarOptions{Bookies: -1})
	if err == nil || !strings.Contains(err.Error(), "PulsarOptions.Bookies (-1) must be at least 1") {
		t.Fatalf("StartPulsar = %v; want the Bookies error", err)
	}
}

func TestConsecutiveFreePorts(t *testing.T) {
	ports, err := consecutiveFreePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range ports {
		if p != ports[0]+i {
			t.Fatalf("ports %v are not consecutive", ports)
		}
		if !portFree(p) {
			t.Errorf("port %d is not free", p)
		}
	}
	// Handed-out ports are never handed out again.
	more, err := FreePorts(20)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range more {
		for _, p := range ports {
			if m == p {
				t.Errorf("FreePort returned %d, already handed out as a bookie port", m)
			}
		}
	}
}
