package localrun

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/durability"
)

var ombDrivers = filepath.Join("..", "ombdriver", "testdata", "omb")

func TestLoadDriverFile(t *testing.T) {
	level := v1alpha1.Level(2)
	eff, err := durability.Translate(v1alpha1.SystemKafka, v1alpha1.DurabilitySpec{Level: &level})
	if err != nil {
		t.Fatal(err)
	}
	drv, sec, dropped, err := LoadDriverFile(filepath.Join(ombDrivers, "driver-kafka", "kafka-latency.yaml"), v1alpha1.SystemKafka, eff)
	if err != nil {
		t.Fatal(err)
	}
	if drv.Kafka.Consumer["max.partition.fetch.bytes"] != "10485760" || drv.Kafka.Producer["batch.size"] != "131072" {
		t.Errorf("kafka-latency.yaml mapped to %+v", drv.Kafka)
	}
	if len(dropped) == 0 {
		t.Error("bootstrap.servers and the level's own keys must be listed as not applied")
	}
	if sec != nil {
		t.Errorf("kafka-latency.yaml has no security keys, got %+v", sec)
	}
	_, _, _, err = LoadDriverFile(filepath.Join(ombDrivers, "driver-kafka", "kafka-sync.yaml"), v1alpha1.SystemKafka, eff)
	if err == nil || !strings.Contains(err.Error(), "--driver") || !strings.Contains(err.Error(), "choose the durability level instead") {
		t.Errorf("kafka-sync.yaml at level 2: want the durability refusal naming --driver, got %v", err)
	}
}

// A driver file that disagrees with the run is refused before any broker
// starts: the one-broker run has replication factor 1, OMB's file says 3.
func TestRunRefusesDisagreeingDriverFile(t *testing.T) {
	_, err := Run(context.Background(), Options{
		RunFile:      filepath.Join("testdata", "kafka-1-broker.yaml"),
		WorkloadFile: filepath.Join("testdata", "short-latency.yaml"),
		DriverFile:   filepath.Join(ombDrivers, "driver-kafka", "kafka.yaml"),
		ResultsDir:   t.TempDir(),
	})
	if err == nil || !strings.Contains(err.Error(), "replicationFactor 3 disagrees with spec.durability") {
		t.Fatalf("want the replicationFactor refusal, got %v", err)
	}
}

// A run file written for a cluster names its driver file in a ConfigMap;
// local mode has none to read and says to give the file with --driver.
func TestRunWantsDriverForConfigMapRef(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("testdata", "kafka-1-broker.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	runFile := filepath.Join(dir, "run.yaml")
	withRef := strings.Replace(string(data), "spec:\n", "spec:\n  driver: {configMapRef: {name: kafka-latency}}\n", 1)
	if withRef == string(data) {
		t.Fatal("testdata/kafka-1-broker.yaml changed: no spec: line to add the driver to")
	}
	if err := os.WriteFile(runFile, []byte(withRef), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), Options{
		RunFile:      runFile,
		WorkloadFile: filepath.Join("testdata", "short-latency.yaml"),
		ResultsDir:   t.TempDir(),
	})
	if err == nil || !strings.Contains(err.Error(), "spec.driver.configMapRef (ConfigMap kafka-latency) is read in a cluster only") || !strings.Contains(err.Error(), "--driver FILE") {
		t.Fatalf("want the --driver hint, got %v", err)
	}
}
