// Command gen records the report tests' results from real runs: local Kafka
// and Pulsar clusters (JVMs from Maven Central jars), two in-process workers
// over HTTP and the real coordinator, at the durability levels of the
// durability study's (docs/methodology.md) Tables 2-4 and 2-5 (async local durability: ack-1 is
// level 4, ack-all / ack-2 is level 2), plus a mixed run for the drain chart.
//
//	go run ./internal/report/testdata/gen [-out internal/report/testdata] [-only kafka]
//
// It takes about 10 minutes on 2 cores. The results are committed, so the
// report tests never need a broker.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/coordinator"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/localbrokers"
	"github.com/streambench/streambench-operator/internal/worker"
)

func f64(v float64) *float64 { return &v }
func i32(v int32) *int32     { return &v }

// fixed is a small version of the study's latency workload: 1 KB messages at
// a fixed rate with one tailing subscription.
func fixed(name string) v1alpha1.WorkloadSpec {
	return v1alpha1.WorkloadSpec{
		Name: name, Topics: 1, PartitionsPerTopic: 8, MessageSize: 1024,
		ProducersPerTopic: 2, ConsumerPerSubscription: 2, SubscriptionsPerTopic: i32(1),
		ProducerRate: 4000, TestDurationMinutes: f64(1.5), WarmupDurationMinutes: f64(0.25),
	}
}

func mixed(name string) v1alpha1.WorkloadSpec {
	w := fixed(name)
	w.TestDurationMinutes = f64(0.5)
	w.ConsumerBacklogSizeGB = f64(0.3)
	w.Mixed = &v1alpha1.MixedWorkload{CatchUpSubscriptionsPerTopic: 1}
	return w
}

type runSpec struct {
	name     string
	level    v1alpha1.Level
	wl       v1alpha1.WorkloadSpec
	interval time.Duration
}

func main() {
	out := flag.String("out", "internal/report/testdata", "directory to write <run>/summary.json and omb-result.json into")
	only := flag.String("only", "", "record only these runs (comma-separated names, or kafka or pulsar)")
	flag.Parse()
	ctx := context.Background()
	urls, stop := startWorkers(2)
	defer stop()

	want := func(sys string, r runSpec) bool {
		if *only == "" || *only == sys {
			return true
		}
		for _, n := range strings.Split(*only, ",") {
			if n == r.name {
				return true
			}
		}
		return false
	}
	for _, r := range []runSpec{
		{"kafka-ack-1", v1alpha1.Level4, fixed("kafka-ack-1"), 5 * time.Second},
		{"kafka-ack-all", v1alpha1.Level2, fixed("kafka-ack-all"), 5 * time.Second},
		// 1 s intervals: the drain of a small backlog takes seconds.
		{"kafka-mixed", v1alpha1.Level2, mixed("kafka-mixed"), time.Second},
	} {
		if want("kafka", r) {
			must(runKafka(ctx, urls, *out, r))
		}
	}
	for _, r := range []runSpec{
		{"pulsar-ack-1", v1alpha1.Level4, fixed("pulsar-ack-1"), 5 * time.Second},
		{"pulsar-ack-2", v1alpha1.Level2, fixed("pulsar-ack-2"), 5 * time.Second},
	} {
		if want("pulsar", r) {
			must(runPulsar(ctx, urls, *out, r))
		}
	}
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

func effective(sys v1alpha1.System, l v1alpha1.Level) (v1alpha1.EffectiveDurability, error) {
	return durability.Translate(sys, v1alpha1.DurabilitySpec{Level: &l})
}

func runKafka(ctx context.Context, urls []string, out string, r runSpec) error {
	eff, err := effective(v1alpha1.SystemKafka, r.level)
	if err != nil {
		return err
	}
	k, err := localbrokers.StartKafka(ctx, localbrokers.KafkaOptions{BrokerConfig: eff.Kafka.Broker, Log: log.Printf})
	if err != nil {
		return err
	}
	defer func() {
		if err := k.Stop(); err != nil {
			log.Printf("stopping Kafka: %v", err)
		}
	}()
	cfg := driver.Config{System: v1alpha1.SystemKafka, Brokers: v1alpha1.BrokerEndpoints{BootstrapServers: k.Bootstrap()}, Durability: eff}
	return record(ctx, urls, out, r, cfg)
}

func runPulsar(ctx context.Context, urls []string, out string, r runSpec) error {
	eff, err := effective(v1alpha1.SystemPulsar, r.level)
	if err != nil {
		return err
	}
	p, err := localbrokers.StartPulsar(ctx, localbrokers.PulsarOptions{BrokerConfig: eff.Pulsar.Broker, BookieConfig: eff.Pulsar.Bookie, Log: log.Printf})
	if err != nil {
		return err
	}
	defer func() {
		if err := p.Stop(); err != nil {
			log.Printf("stopping Pulsar: %v", err)
		}
	}()
	cfg := driver.Config{System: v1alpha1.SystemPulsar, Brokers: v1alpha1.BrokerEndpoints{ServiceURL: p.ServiceURL(), AdminURL: p.AdminURL()}, Durability: eff}
	return record(ctx, urls, out, r, cfg)
}

func record(ctx context.Context, urls []string, out string, r runSpec, cfg driver.Config) error {
	cfg.RunID = fmt.Sprintf("%s-%d", strings.ReplaceAll(r.name, "-", ""), time.Now().Unix()%1e6)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	res, err := coordinator.Run(ctx, coordinator.Options{
		Workers: urls, Driver: cfg, Workload: r.wl,
		SnapshotInterval: r.interval, Logf: log.Printf,
	})
	if err != nil {
		return fmt.Errorf("%s: %w", r.name, err)
	}
	sum, err := coordinator.WriteFiles(filepath.Join(out, r.name), res.ResultsInput(r.name, "", &cfg.Durability))
	if err != nil {
		return fmt.Errorf("%s: %w", r.name, err)
	}
	log.Printf("%s: %.0f msg/s, publish p99 %.2f ms", r.name, sum.Results.PublishRateMsgPerSec, sum.Results.PublishLatencyMs.P99)
	return nil
}

// startWorkers serves n in-process workers over HTTP on loopback.
func startWorkers(n int) ([]string, func()) {
	var urls []string
	var stops []func()
	for i := 0; i < n; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		must(err)
		ctx, cancel := context.WithCancel(context.Background())
		w := worker.New(worker.Options{Name: fmt.Sprintf("worker-%d", i), Drivers: worker.DefaultDrivers(), FlushTimeout: 30 * time.Second})
		done := make(chan struct{})
		go func() { defer close(done); _ = worker.ServeListener(ctx, ln, w) }()
		stops = append(stops, func() { cancel(); <-done })
		urls = append(urls, "http://"+ln.Addr().String())
	}
	return urls, func() {
		for _, s := range stops {
			s()
		}
	}
}

func init() {
	log.SetFlags(log.Ltime)
	log.SetOutput(os.Stderr)
}
