//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// What the three-node specs read from the brokers themselves while the
// load runs, rather than from the run's spec or status: a replication
// factor or an ensemble size in the configuration says what was asked,
// the brokers' own view says what the writes got.

// describeKafkaTopics is `kafka-topics.sh --describe --exclude-internal` run in a
// broker pod against its own listener: Kafka's TopicCommand through the
// image's kafka-run-class.sh (Apache's image and streambench's local one
// both have it), in a small JVM of its own, without the broker's JMX
// exporter agent or heap (KAFKA_OPTS, KAFKA_HEAP_OPTS of the container).
func describeKafkaTopics(pod string) (string, error) {
	return kubectlE(nil, "-n", testNS, "exec", pod, "-c", "kafka", "--", "bash", "-c",
		"unset KAFKA_OPTS KAFKA_JMX_OPTS KAFKA_GC_LOG_OPTS KAFKA_LOG4J_OPTS; "+
			"KAFKA_HEAP_OPTS=-Xmx128m KAFKA_JVM_PERFORMANCE_OPTS='-XX:+UseSerialGC -XX:TieredStopAtLevel=1' "+
			"exec /opt/kafka/bin/kafka-run-class.sh org.apache.kafka.tools.TopicCommand --bootstrap-server localhost:9092 --describe --exclude-internal")
}

// kafkaTopic is one topic as kafka-topics.sh describes it.
type kafkaTopic struct {
	name              string
	replicationFactor int
	configs           string
	// partitions: each partition's replicas and in-sync replicas (broker ids).
	replicas, isr [][]string
}

// parseKafkaTopics reads kafka-topics.sh --describe's tab-separated
// "Key: value" lines: one per topic, then one per partition.
func parseKafkaTopics(out string) []*kafkaTopic {
	var topics []*kafkaTopic
	for _, line := range strings.Split(out, "\n") {
		fields := map[string]string{}
		for _, f := range strings.Split(strings.TrimSpace(line), "\t") {
			if k, v, ok := strings.Cut(f, ":"); ok {
				fields[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		}
		name, ok := fields["Topic"]
		if !ok {
			continue
		}
		if _, partition := fields["Partition"]; !partition {
			rf, _ := strconv.Atoi(fields["ReplicationFactor"])
			topics = append(topics, &kafkaTopic{name: name, replicationFactor: rf, configs: fields["Configs"]})
			continue
		}
		if len(topics) == 0 || topics[len(topics)-1].name != name {
			continue
		}
		t := topics[len(topics)-1]
		t.replicas = append(t.replicas, splitIDs(fields["Replicas"]))
		t.isr = append(t.isr, splitIDs(fields["Isr"]))
	}
	return topics
}

func splitIDs(s string) []string {
	var out []string
	for _, id := range strings.Split(s, ",") {
		if id = strings.TrimSpace(id); id != "" {
			out = append(out, id)
		}
	}
	return out
}

// expectKafkaTopicsInSync asks the broker pod, every few seconds while run
// is Running, until each topic of the run has every partition on rf
// replicas, all rf in sync, with min.insync.replicas minISR in the topic's
// configuration; it returns what the broker said. The run's topics exist
// only while its load runs: a run that leaves Running first fails the spec.
func expectKafkaTopicsInSync(ctx context.Context, run *v1alpha1.BenchmarkRun, pod string, rf int, minISR string) string {
	GinkgoHelper()
	var last string
	Eventually(func(g Gomega) {
		if got := getRun(ctx, run); got.Status.Phase != v1alpha1.PhaseRunning {
			StopTrying(fmt.Sprintf("run %s is %s before its topic was read from the brokers; the broker said last:\n%s", got.Name, got.Status.Phase, last)).Now()
		}
		out, err := describeKafkaTopics(pod)
		last = out
		g.Expect(err).NotTo(HaveOccurred(), "kafka-topics.sh in %s: %s", pod, out)
		topics := parseKafkaTopics(out)
		g.Expect(topics).NotTo(BeEmpty(), "no topic yet:\n%s", out)
		for _, t := range topics {
			g.Expect(t.replicationFactor).To(Equal(rf), "topic %s:\n%s", t.name, out)
			g.Expect(strings.Split(t.configs, ",")).To(ContainElement("min.insync.replicas="+minISR), "topic %s:\n%s", t.name, out)
			g.Expect(t.replicas).NotTo(BeEmpty(), "topic %s has no partition lines:\n%s", t.name, out)
			for i := range t.replicas {
				g.Expect(t.replicas[i]).To(HaveLen(rf), "topic %s partition %d replicas:\n%s", t.name, i, out)
				g.Expect(t.isr[i]).To(ConsistOf(t.replicas[i]), "topic %s partition %d: every replica in sync:\n%s", t.name, i, out)
			}
		}
	}).WithContext(ctx).WithTimeout(4 * time.Minute).WithPolling(3 * time.Second).Should(Succeed())
	return last
}

// bookieLedgers is BookKeeper's `bookkeeper shell listledgers -m` (every
// ledger with its metadata, read from the metadata store), run in the
// release's autorecovery pod: it has the bookies' configuration and is off
// the write path, and no memory limit of the run's envelope, so the
// shell's JVM takes nothing from a bookie or a broker under test.
func bookieLedgers(pod string) (string, error) {
	return kubectlE(nil, "-n", testNS, "exec", pod, "--", "bash", "-c",
		"BOOKIE_MEM=-Xmx128m BOOKIE_GC='-XX:+UseSerialGC -XX:TieredStopAtLevel=1' exec bin/bookkeeper shell listledgers -m 2>&1")
}

// bookKeeperLedger is one ledger's metadata as LedgerMetadata's toString
// prints it: "... ensembleSize=3, writeQuorumSize=3, ackQuorumSize=2, ...
// ensembles={0=[bookie-0:3181, bookie-1:3181, bookie-2:3181]} ...".
type bookKeeperLedger struct {
	ensemble, write, ack int
	// ensembles are the bookies of each fragment, by its first entry.
	ensembles [][]string
}

var (
	ledgerSizes     = regexp.MustCompile(`ensembleSize=(\d+), writeQuorumSize=(\d+), ackQuorumSize=(\d+)`)
	ledgerEnsembles = regexp.MustCompile(`ensembles=\{([^}]*)\}`)
	ledgerFragment  = regexp.MustCompile(`\d+=\[([^\]]*)\]`)
)

// parseLedgers reads the ledgers of listledgers -m's output.
func parseLedgers(out string) []bookKeeperLedger {
	var ledgers []bookKeeperLedger
	for _, line := range strings.Split(out, "\n") {
		m := ledgerSizes.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var l bookKeeperLedger
		l.ensemble, _ = strconv.Atoi(m[1])
		l.write, _ = strconv.Atoi(m[2])
		l.ack, _ = strconv.Atoi(m[3])
		if e := ledgerEnsembles.FindStringSubmatch(line); e != nil {
			for _, f := range ledgerFragment.FindAllStringSubmatch(e[1], -1) {
				l.ensembles = append(l.ensembles, splitIDs(f[1]))
			}
		}
		ledgers = append(ledgers, l)
	}
	return ledgers
}

// expectLedgersOnBookies asks the autorecovery pod, every few seconds
// while run is Running, until the metadata store has ledgers (the run's
// topics' and cursors') and every one has the quorums q, each of its
// fragments on q.EnsembleSize distinct bookies; it returns the bookies
// the ledgers were written to and what the shell said.
func expectLedgersOnBookies(ctx context.Context, run *v1alpha1.BenchmarkRun, pod string, q v1alpha1.PulsarDurability) ([]string, string) {
	GinkgoHelper()
	var last string
	var bookies []string
	Eventually(func(g Gomega) {
		if got := getRun(ctx, run); got.Status.Phase != v1alpha1.PhaseRunning {
			StopTrying(fmt.Sprintf("run %s is %s before its ledgers were read; the shell said last:\n%s", got.Name, got.Status.Phase, last)).Now()
		}
		out, err := bookieLedgers(pod)
		last = out
		g.Expect(err).NotTo(HaveOccurred(), "bookkeeper shell listledgers in %s: %s", pod, out)
		ledgers := parseLedgers(out)
		g.Expect(ledgers).NotTo(BeEmpty(), "no ledger yet:\n%s", out)
		bookies = nil
		for i, l := range ledgers {
			g.Expect([]int{l.ensemble, l.write, l.ack}).To(Equal([]int{int(q.EnsembleSize), int(q.WriteQuorum), int(q.AckQuorum)}),
				"ledger %d's ensemble, write and ack quorum:\n%s", i, out)
			g.Expect(l.ensembles).NotTo(BeEmpty(), "ledger %d has no ensemble:\n%s", i, out)
			for _, e := range l.ensembles {
				distinct := slices.Compact(slices.Sorted(slices.Values(e)))
				g.Expect(distinct).To(HaveLen(int(q.EnsembleSize)), "ledger %d's fragment on %v:\n%s", i, e, out)
				for _, b := range distinct {
					if !slices.Contains(bookies, b) {
						bookies = append(bookies, b)
					}
				}
			}
		}
	}).WithContext(ctx).WithTimeout(4 * time.Minute).WithPolling(3 * time.Second).Should(Succeed())
	slices.Sort(bookies)
	return bookies, last
}
