package inspect

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/driver/pulsar"
	"github.com/streambench/streambench-operator/internal/results"
)

// failureKey is a broker setting that bounds what a failure does to the
// writes, and how its value reads as seconds (0: not a length of time).
type failureKey struct {
	name   string
	unit   time.Duration
	bounds string
}

// The Kafka brokers' keys (KRaft). Not read: broker.heartbeat.interval.ms
// (it shortens a stall by at most itself, MatchEarlySeconds) and the
// producer's own timeouts (the driver's, not the brokers').
var kafkaFailureKeys = []failureKey{
	{"broker.session.timeout.ms", time.Millisecond, "the controller fences a broker that stopped heartbeating for this long, then elects new leaders for its partitions"},
	{"replica.lag.time.max.ms", time.Millisecond, "a leader drops a follower that has not caught up for this long from the ISR; acks=all writes wait for it until then"},
	{"unclean.leader.election.enable", 0, "whether a replica outside the ISR may become leader (losing what it lacks) when no in-sync one is left"},
}

// kafkaELRFeature is Eligible Leader Replicas (KIP-966), a finalized
// feature of the cluster, not a broker config.
const kafkaELRFeature = "eligible.leader.replicas.version"

// The Pulsar broker's keys (its runtime configuration).
var pulsarFailureKeys = []failureKey{
	{"bookkeeperClientTimeoutInSeconds", time.Second, "the broker's BookKeeper client fails an add or a read a bookie has not answered for this long"},
	{"managedLedgerAddEntryTimeoutSeconds", time.Second, "a topic fails a write its ledger has not persisted for this long (0: never)"},
	{"managedLedgerReadEntryTimeoutSeconds", time.Second, "a topic fails a read its ledger has not answered for this long (0: never)"},
	{"metadataStoreSessionTimeoutMillis", time.Millisecond, "a broker or bookie whose metadata session is silent for this long loses its registration (and the broker its topics)"},
	{"managedLedgerDefaultEnsembleSize", 0, "the bookies a ledger writes across; a lost one is replaced only by a bookie outside the ensemble"},
	{"managedLedgerDefaultWriteQuorum", 0, "the bookies each entry is written to"},
	{"managedLedgerDefaultAckQuorum", 0, "the bookies that must acknowledge an entry"},
}

// Failure reads the settings that bound a failure's stall from the
// brokers: Kafka through DescribeConfigs of every broker and ApiVersions'
// finalized features, Pulsar through the broker's runtime configuration.
// It uses the run's own credentials.
func Failure(ctx context.Context, system v1alpha1.System, brokers v1alpha1.BrokerEndpoints, sec *driver.Security) ([]results.BrokerSetting, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	switch system {
	case v1alpha1.SystemKafka:
		return kafkaFailure(ctx, brokers.BootstrapServers, sec)
	case v1alpha1.SystemPulsar:
		return pulsarFailure(ctx, brokers.AdminURL, sec)
	}
	return nil, fmt.Errorf("inspect: system %q is not kafka or pulsar", system)
}

func kafkaFailure(ctx context.Context, bootstrap string, sec *driver.Security) ([]results.BrokerSetting, error) {
	cl, rcs, err := brokerConfigs(ctx, bootstrap, sec)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	values := map[string][]string{} // key: each broker's value
	for _, rc := range rcs {
		for _, c := range rc.Configs {
			if c.Value != nil {
				values[c.Key] = append(values[c.Key], *c.Value)
			}
		}
	}
	out := settingsOf(kafkaFailureKeys, values)
	req := kmsg.NewPtrApiVersionsRequest()
	req.ClientSoftwareName, req.ClientSoftwareVersion = "streambench", "1"
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return out, fmt.Errorf("inspect: ApiVersions (for the cluster's finalized features): %w", err)
	}
	elr := results.BrokerSetting{Name: kafkaELRFeature, Value: "0 (off: not finalized)",
		Bounds: "Eligible Leader Replicas (KIP-966): with it on, a replica that left the ISR cleanly stays eligible to lead, so losing the ISR below min.insync.replicas needs no unclean election"}
	for _, f := range resp.FinalizedFeatures {
		if f.Name == kafkaELRFeature {
			state := "off"
			if f.MaxVersionLevel >= 1 {
				state = "on"
			}
			elr.Value = fmt.Sprintf("%d (%s)", f.MaxVersionLevel, state)
		}
	}
	return append(out, elr), nil
}

func pulsarFailure(ctx context.Context, adminURL string, sec *driver.Security) ([]results.BrokerSetting, error) {
	hc, authorize, err := pulsar.AdminHTTP(sec)
	if err != nil {
		return nil, fmt.Errorf("inspect: %w", err)
	}
	c := &admin{Client: hc, authorize: authorize}
	body, err := get(ctx, c, strings.TrimRight(adminURL, "/")+"/admin/v2/brokers/configuration/runtime")
	if err != nil {
		return nil, err
	}
	var runtime map[string]string
	if err := json.Unmarshal(body, &runtime); err != nil {
		return nil, fmt.Errorf("inspect: broker runtime configuration: %w", err)
	}
	values := map[string][]string{}
	for k, v := range runtime {
		values[k] = []string{v}
	}
	return settingsOf(pulsarFailureKeys, values), nil
}

// settingsOf turns the values read (one per broker) into settings, in the
// keys' order; a key no broker had is left out. Brokers that disagree are
// said, and the longest value stands for them (a stall waits for the
// slowest). Pure.
func settingsOf(keys []failureKey, values map[string][]string) []results.BrokerSetting {
	var out []results.BrokerSetting
	for _, k := range keys {
		vs := distinct(values[k.name])
		if len(vs) == 0 {
			continue
		}
		s := results.BrokerSetting{Name: k.name, Value: vs[0], Bounds: k.bounds}
		if len(vs) > 1 {
			s.Value = strings.Join(vs, " or ") + " (the brokers differ)"
		}
		if k.unit > 0 {
			var longest float64
			ok := true
			for _, v := range vs {
				n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				if err != nil {
					ok = false
					break
				}
				longest = max(longest, n*k.unit.Seconds())
			}
			if ok {
				s.Seconds = &longest
			}
		}
		out = append(out, s)
	}
	return out
}

func distinct(vs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range vs {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}
