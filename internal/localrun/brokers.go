package localrun

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/localbrokers"
	"github.com/streambench/streambench-operator/internal/results"
)

// KafkaOptions are the local brokers a managed Kafka run asks for: the
// spec's broker count, and the durability translation's broker settings
// with spec.cluster.managed.brokerConfig applied over them (as the
// operator hands them to Strimzi). Pure.
func KafkaOptions(run *v1alpha1.BenchmarkRun, eff v1alpha1.EffectiveDurability, dataDir string) localbrokers.KafkaOptions {
	m := run.Spec.Cluster.Managed
	// With faults the controller runs apart: then no broker is the one
	// KRaft controller, and a killed broker (the leader, whichever it is)
	// does not take the cluster's metadata with it, as it would not in a
	// cluster of three controllers.
	o := localbrokers.KafkaOptions{Brokers: int(m.Brokers), BrokerConfig: map[string]string{}, SeparateController: len(run.Spec.Faults) > 0}
	if eff.Kafka != nil {
		maps.Copy(o.BrokerConfig, eff.Kafka.Broker)
	}
	maps.Copy(o.BrokerConfig, m.BrokerConfig)
	o.Dir, o.ReadyTimeout = startPlace(run, dataDir, "kafka")
	return o
}

// PulsarOptions are the local standalone a managed Pulsar run asks for:
// the spec's bookies (default 3, so ensemble 3 / write 3 / ack 2 is real),
// and the translation's broker and bookie settings with brokerConfig and
// bookieConfig applied over them. Pure.
func PulsarOptions(run *v1alpha1.BenchmarkRun, eff v1alpha1.EffectiveDurability, dataDir string) localbrokers.PulsarOptions {
	m := run.Spec.Cluster.Managed
	o := localbrokers.PulsarOptions{Bookies: int(m.BookiesOrDefault()), BrokerConfig: map[string]string{}, BookieConfig: map[string]string{}}
	if eff.Pulsar != nil {
		maps.Copy(o.BrokerConfig, eff.Pulsar.Broker)
		maps.Copy(o.BookieConfig, eff.Pulsar.Bookie)
	}
	maps.Copy(o.BrokerConfig, m.BrokerConfig)
	maps.Copy(o.BookieConfig, m.BookieConfig)
	// A fault hits one bookie: each needs a JVM of its own to be killed
	// and started again alone.
	o.BookieProcesses = len(run.Spec.Faults) > 0
	o.Dir, o.ReadyTimeout = startPlace(run, dataDir, "pulsar")
	return o
}

// startPlace is where a system's brokers keep their data (dataDir/system,
// or "" for a temporary directory) and how long they may take to be ready
// (spec.timeouts.provisioning, as in a cluster; 0 for localbrokers' own
// default when a run built in Go left it unset).
func startPlace(run *v1alpha1.BenchmarkRun, dataDir, system string) (dir string, ready time.Duration) {
	if dataDir != "" {
		dir = filepath.Join(dataDir, system)
	}
	if t := run.Spec.Timeouts.Provisioning; t != nil {
		ready = t.Duration
	}
	return dir, ready
}

// LocalNotes say how a local run differs from the same spec on a cluster;
// they are printed before the run and kept in the summary's notes. Pure.
func LocalNotes(run *v1alpha1.BenchmarkRun) []string {
	s := run.Spec
	m := s.Cluster.Managed
	if m == nil {
		return []string{"local mode: existing brokers; the workers and the coordinator ran on this machine"}
	}
	var notes []string
	switch s.System {
	case v1alpha1.SystemKafka:
		notes = append(notes, fmt.Sprintf("local mode: %d Kafka %s brokers (KRaft) ran as JVM processes on this machine, with the workers and the coordinator",
			m.Brokers, localbrokers.DefaultKafkaVersion))
		if len(s.Faults) > 0 {
			notes = append(notes, "spec.faults: the KRaft controller ran as a JVM of its own (kafka-controller) beside the brokers, so a killed broker did not take the one local controller with it; a cluster has three controllers for that")
		}
		if m.Version != "" && m.Version != localbrokers.DefaultKafkaVersion {
			notes = append(notes, fmt.Sprintf("spec.cluster.managed.version %s was not used: local mode runs Kafka %s from Maven Central",
				m.Version, localbrokers.DefaultKafkaVersion))
		}
	case v1alpha1.SystemPulsar:
		notes = append(notes, fmt.Sprintf("local mode: Pulsar %s standalone (one broker, %d bookies, one ZooKeeper) ran as one JVM process on this machine, with the workers and the coordinator",
			localbrokers.DefaultPulsarVersion, m.BookiesOrDefault()))
		if len(s.Faults) > 0 {
			notes = append(notes, "spec.faults: each bookie ran as a JVM of its own beside the standalone (ZooKeeper and the broker), so a fault could kill one bookie and it could be started again, as the kubelet restarts a bookie's container")
		}
		if m.Brokers > 1 {
			notes = append(notes, fmt.Sprintf("spec.cluster.managed.brokers asks for %d Pulsar brokers, but Pulsar standalone has one: every topic was served by a single broker (the bookies, and so the replication, are as the spec asks)",
				m.Brokers))
		}
		if m.Version != "" && m.Version != localbrokers.DefaultPulsarVersion {
			notes = append(notes, fmt.Sprintf("spec.cluster.managed.version %s was not used: local mode runs Pulsar %s, the newest 4.0.x whose jars all resolve from Maven Central",
				m.Version, localbrokers.DefaultPulsarVersion))
		}
	}
	return notes
}

// brokers are the system under test of one local run: started here, or
// given (spec.cluster.existing).
type brokers struct {
	endpoints v1alpha1.BrokerEndpoints
	kafka     *localbrokers.Kafka
	pulsar    *localbrokers.Pulsar
	// setup is how the brokers this run started run; nil for existing
	// brokers.
	setup *results.BrokerSetup
	// javaError says why setup has no Java runtime.
	javaError string

	mu   sync.Mutex
	pids []int
}

func existingBrokers(e *v1alpha1.ExistingCluster) *brokers {
	return &brokers{endpoints: v1alpha1.BrokerEndpoints{
		BootstrapServers: e.BootstrapServers, ServiceURL: e.ServiceURL, AdminURL: e.AdminURL,
	}}
}

// startBrokers starts what a managed run asks for; nothing for an existing
// cluster.
func startBrokers(ctx context.Context, run *v1alpha1.BenchmarkRun, eff v1alpha1.EffectiveDurability, dataDir string, jvm []string, logf func(string, ...any)) (*brokers, error) {
	if e := run.Spec.Cluster.Existing; e != nil {
		return existingBrokers(e), nil
	}
	b := &brokers{}
	switch run.Spec.System {
	case v1alpha1.SystemKafka:
		o := KafkaOptions(run, eff, dataDir)
		o.Log, o.JVM = logf, jvm
		k, err := localbrokers.StartKafka(ctx, o)
		if err != nil {
			return nil, fmt.Errorf("starting Kafka: %w", err)
		}
		b.kafka = k
		where := "local JVMs, " + strconv.Itoa(len(k.Nodes)) + " Kafka nodes"
		if k.Controller != nil {
			where += " and a KRaft controller of its own"
		}
		b.setup = &results.BrokerSetup{Where: where, Java: k.Setup.Java, JVM: k.Setup.JVM, Config: k.Setup.Config}
		b.javaError = k.Setup.JavaError
		b.endpoints.BootstrapServers = k.Bootstrap()
		b.setPids(k.Pids())
	case v1alpha1.SystemPulsar:
		o := PulsarOptions(run, eff, dataDir)
		o.Log, o.JVM = logf, jvm
		p, err := localbrokers.StartPulsar(ctx, o)
		if err != nil {
			return nil, fmt.Errorf("starting Pulsar: %w", err)
		}
		b.pulsar = p
		where := "local JVM, one Pulsar standalone (broker, " + strconv.Itoa(o.Bookies) + " bookies, ZooKeeper)"
		if o.BookieProcesses {
			where = "local JVMs, one Pulsar standalone (broker, ZooKeeper) and " + strconv.Itoa(o.Bookies) + " bookies of their own (" + strings.Join(localbrokers.PulsarBookieJVM, " ") + ")"
		}
		b.setup = &results.BrokerSetup{Where: where, Java: p.Setup.Java, JVM: p.Setup.JVM, Config: p.Setup.Config}
		b.javaError = p.Setup.JavaError
		b.endpoints.ServiceURL, b.endpoints.AdminURL = p.ServiceURL(), p.AdminURL()
		b.setPids(p.Pids())
	default:
		return nil, fmt.Errorf("spec.system %q: set kafka or pulsar", run.Spec.System)
	}
	return b, nil
}

func (b *brokers) setPids(p []int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pids = append([]int(nil), p...)
}

// Pids are the broker JVMs this run started (none for an existing
// cluster).
func (b *brokers) Pids() []int {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]int(nil), b.pids...)
}

// stop stops the started brokers gracefully, each by its pid, and removes
// their temporary data. Idempotent.
func (b *brokers) stop() error {
	if b == nil {
		return nil
	}
	var errs []error
	if b.kafka != nil {
		errs = append(errs, b.kafka.Stop())
	}
	if b.pulsar != nil {
		errs = append(errs, b.pulsar.Stop())
	}
	return errors.Join(errs...)
}

// kill ends every started broker JVM at once (SIGKILL by pid, no grace):
// the second Ctrl-C.
func (b *brokers) kill() error {
	var wg sync.WaitGroup
	pids := b.Pids()
	errs := make([]error, len(pids))
	for i, pid := range pids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = localbrokers.StopPid(pid, 0)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
