// Command floor measures what the client library itself costs: the
// messages of one OMB workload (one topic, its producers, one consumer)
// sent and received through the bare client — franz-go or pulsar-client-go,
// built with exactly the options streambench's drivers give it — paced by
// the same sleeps and wake rules as the worker (internal/pace), with no
// payload header, no histograms, no loss accounting and no coordinator.
// Its CPU per million messages is the floor under streambench's; its
// sleeps' overshoot is the timing floor under streambench's send delay.
// hack/bench-omb runs it beside OMB and streambench; it is a benchmark
// tool, not part of the product.
//
//	floor --system kafka --bootstrap HOST:PORT --workload-file WL.yaml \
//	      [--driver-json JSON] [--durability-json '{"level":2}']
//	floor --system pulsar --service-url pulsar://... --admin-url http://... ...
//
// It prints one JSON line: the process's CPU seconds (user+system, start to
// end, as bench-omb measures the other tools), the acknowledged and
// received messages, the measured phase's publish rate, the send delay
// p50/p99 of its messages (how late each was handed to the client against
// its intended time) and the wake-up overshoot p50/p99 of its sleeps (how
// late each sleep ended against the time it asked for), in ms, both of the
// measured phase, as streambench reports its send delay.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/worker"
	"github.com/streambench/streambench-operator/internal/workload"
)

func main() {
	var f flags
	flag.StringVar(&f.system, "system", "", "kafka or pulsar")
	flag.StringVar(&f.bootstrap, "bootstrap", "", "Kafka bootstrap servers")
	flag.StringVar(&f.serviceURL, "service-url", "", "Pulsar service URL")
	flag.StringVar(&f.adminURL, "admin-url", "", "Pulsar admin URL")
	flag.StringVar(&f.workloadFile, "workload-file", "", "OMB workload file: 1 topic, at most 1 subscription with 1 consumer, a fixed producerRate")
	flag.StringVar(&f.driverJSON, "driver-json", "", "client settings as JSON (spec.driver), as streambench's coordinator takes them")
	flag.StringVar(&f.durabilityJSON, "durability-json", `{"level":2}`, "durability as JSON (spec.durability)")
	flag.StringVar(&f.cpuProfile, "cpu-profile", "", "write a Go CPU profile of the whole run to this file (as streambench worker --cpu-profile)")
	flag.BoolVar(&f.unique, "unique", false, "write the worker's header (sequence number, send time) into each message, in buffers taken back at the ack, as streambench's worker does, instead of sending one shared payload: what a message of its own costs")
	flag.Parse()
	if f.cpuProfile != "" {
		out, err := os.Create(f.cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(out)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "floor: --cpu-profile:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := run(ctx, f)
	if err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
	out, _ := json.Marshal(res)
	fmt.Println(string(out))
}

type flags struct {
	system, bootstrap, serviceURL, adminURL  string
	workloadFile, driverJSON, durabilityJSON string
	cpuProfile                               string
	unique                                   bool
}

// plan is what one floor run sends.
type plan struct {
	partitions      int32
	producers       int // one client each, taking turns as the worker's do
	payload         []byte
	rate            float64 // msg/s
	warmup, measure time.Duration
	consume         bool
	unique          *buffers // with --unique: each message in a buffer of its own
}

// message is the payload of the next message: the shared one, or with
// --unique one of its own.
func (p plan) message() []byte {
	if p.unique != nil {
		return p.unique.next(p.payload)
	}
	return p.payload
}

// result is the JSON line; latencies in ms.
type result struct {
	CPU          float64 `json:"cpu"`
	Msgs         int64   `json:"msgs"`
	Received     int64   `json:"received"`
	Rate         float64 `json:"rate"`
	SendDelayP50 float64 `json:"sendDelayP50"`
	SendDelayP99 float64 `json:"sendDelayP99"`
	WakeLateP50  float64 `json:"wakeLateP50"`
	WakeLateP99  float64 `json:"wakeLateP99"`
}

// client is one system's bare producer and consumer.
type client interface {
	// send hands payload to producer k (of plan.producers); the ack is
	// counted by the client.
	send(k int, payload []byte)
	// flush waits for every sent message's ack.
	flush(ctx context.Context) error
	acked() int64
	received() int64
	close()
}

func run(ctx context.Context, f flags) (result, error) {
	p, cfg, err := load(f)
	if err != nil {
		return result{}, err
	}
	var c client
	switch cfg.System {
	case v1alpha1.SystemKafka:
		c, err = newKafka(ctx, cfg, p)
	case v1alpha1.SystemPulsar:
		c, err = newPulsar(ctx, cfg, p)
	}
	if err != nil {
		return result{}, err
	}
	defer c.close()

	// One message from each producer, acknowledged, before the clock
	// starts, as streambench's coordinator probes its producers: the
	// connections, metadata and producer ids are in place, and a fresh
	// broker's first-use delays do not fall on the schedule. (The probes
	// count among the acknowledged and received messages: one each.)
	if err := probe(ctx, c, p); err != nil {
		return result{}, err
	}
	start := time.Now().Add(100 * time.Millisecond)
	measureAt, end := start.Add(p.warmup), start.Add(p.warmup+p.measure)
	var ackedAtMeasure int64
	marked := make(chan struct{})
	go func() { // the publish rate of the measured phase, as the others report it
		defer close(marked)
		select {
		case <-time.After(time.Until(measureAt)):
			ackedAtMeasure = c.acked()
		case <-ctx.Done():
		}
	}()
	turn := 0
	delays, wakes := sendPaced(ctx, p.rate, start, measureAt, end, func() {
		c.send(turn, p.message())
		if turn++; turn == p.producers {
			turn = 0
		}
	})
	ackedAtEnd := c.acked()
	<-marked
	if ctx.Err() != nil {
		return result{}, ctx.Err()
	}
	fctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := c.flush(fctx); err != nil {
		return result{}, fmt.Errorf("flushing the producer: %w", err)
	}
	if p.consume {
		// Everything acknowledged is received before the CPU is read, so
		// the consumer's whole work is in it, as it is in the others'.
		for c.received() < c.acked() && fctx.Err() == nil {
			time.Sleep(10 * time.Millisecond)
		}
		if c.received() < c.acked() {
			return result{}, fmt.Errorf("received %d of %d acknowledged messages within a minute", c.received(), c.acked())
		}
	}
	return result{
		CPU:          processCPU().Seconds(),
		Msgs:         c.acked(),
		Received:     c.received(),
		Rate:         float64(ackedAtEnd-ackedAtMeasure) / p.measure.Seconds(),
		SendDelayP50: delays.quantile(0.5), SendDelayP99: delays.quantile(0.99),
		WakeLateP50: wakes.quantile(0.5), WakeLateP99: wakes.quantile(0.99),
	}, nil
}

// probe sends one message from each producer and waits (a minute at
// most) until all are acknowledged.
func probe(ctx context.Context, c client, p plan) error {
	before := c.acked()
	for k := range p.producers {
		c.send(k, p.message())
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for c.acked() < before+int64(p.producers) {
		if ctx.Err() != nil {
			return fmt.Errorf("probe messages: %d of %d acknowledged within a minute", c.acked()-before, p.producers)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil
}

// load reads the flags into a plan and the drivers' Config, as
// streambench's coordinator would for the same flags.
func load(f flags) (plan, driver.Config, error) {
	sys := v1alpha1.System(f.system)
	cfg := driver.Config{System: sys, RunID: fmt.Sprintf("floor%d", time.Now().Unix())}
	switch sys {
	case v1alpha1.SystemKafka:
		cfg.Brokers.BootstrapServers = f.bootstrap
	case v1alpha1.SystemPulsar:
		cfg.Brokers.ServiceURL, cfg.Brokers.AdminURL = f.serviceURL, f.adminURL
	default:
		return plan{}, cfg, fmt.Errorf("--system %q: use kafka or pulsar", f.system)
	}
	wl, err := workload.LoadFile(f.workloadFile, field.NewPath("workload"))
	if err != nil {
		return plan{}, cfg, err
	}
	var why []string
	if wl.Topics != 1 {
		why = append(why, "one topic")
	}
	if workload.TotalConsumers(wl) > 1 || workload.IsBacklog(wl) || workload.IsMixed(wl) {
		why = append(why, "at most one subscription with one consumer, no backlog, not mixed")
	}
	if workload.IsMaxRate(wl) {
		why = append(why, "a fixed producerRate (the floor does not search a rate)")
	}
	if len(why) > 0 {
		return plan{}, cfg, fmt.Errorf("%s: the floor runs %s", f.workloadFile, strings.Join(why, "; "))
	}
	p := plan{
		partitions: wl.PartitionsPerTopic, producers: workload.TotalProducers(wl), rate: float64(wl.ProducerRate),
		warmup: workload.WarmupDuration(wl), measure: workload.TestDuration(wl),
		consume: workload.TotalConsumers(wl) == 1,
	}
	if workload.ReadsPayloadFile(wl) {
		if p.payload, err = os.ReadFile(wl.PayloadFile); err != nil {
			return plan{}, cfg, fmt.Errorf("payloadFile: %w", err)
		}
	} else {
		p.payload = make([]byte, wl.MessageSize)
	}
	if f.unique {
		if len(p.payload) < worker.HeaderSize {
			return plan{}, cfg, fmt.Errorf("--unique writes the worker's %d-byte header: the workload's messages are %d bytes", worker.HeaderSize, len(p.payload))
		}
		p.unique = newBuffers(len(p.payload))
	}
	var dspec v1alpha1.DurabilitySpec
	if err := strictJSON(f.durabilityJSON, &dspec); err != nil {
		return plan{}, cfg, fmt.Errorf("--durability-json: %w", err)
	}
	if cfg.Durability, err = durability.Translate(sys, dspec); err != nil {
		return plan{}, cfg, err
	}
	if f.driverJSON != "" {
		cfg.Overrides = &v1alpha1.DriverSpec{}
		if err := strictJSON(f.driverJSON, cfg.Overrides); err != nil {
			return plan{}, cfg, fmt.Errorf("--driver-json: %w", err)
		}
	}
	return p, cfg, nil
}

func strictJSON(s string, v any) error {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value")
	}
	return nil
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
