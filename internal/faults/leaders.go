package faults

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// leader in a cluster. Which broker leads a partition is in the brokers'
// metadata, which the coordinator reaches (its driver has the run's
// network, TLS and credentials) and the operator does not. So the
// coordinator, told which faults target leader and when
// (--fault-leaders), asks the brokers at each such fault's time and
// writes the answer into the results ConfigMap beside the clock; the
// operator, finding the fault due, waits for that answer and hits the
// pod of the broker it names.

// KeyLeaders is the results ConfigMap key with the coordinator's answers
// (Leaders as JSON).
const KeyLeaders = "faults.leaders"

// LeaderAnswer says who led when fault Index of Repeat came: Target
// (broker-<node id>), or Error why nobody could be named.
type LeaderAnswer struct {
	Index  int                  `json:"index"`
	Repeat int                  `json:"repeat"`
	Target v1alpha1.FaultTarget `json:"target,omitempty"`
	// Detail is what was asked and answered (the partition, its replicas
	// and in-sync replicas), for status.faults[].resolved.
	Detail string    `json:"detail,omitempty"`
	Error  string    `json:"error,omitempty"`
	At     time.Time `json:"at"`
}

// Leaders are the answers so far.
type Leaders []LeaderAnswer

// ReadLeaders decodes the key; nil when it is absent.
func ReadLeaders(data map[string]string) (Leaders, error) {
	raw, ok := data[KeyLeaders]
	if !ok || raw == "" {
		return nil, nil
	}
	var l Leaders
	if err := json.Unmarshal([]byte(raw), &l); err != nil {
		return nil, fmt.Errorf("results ConfigMap key %s: %w", KeyLeaders, err)
	}
	return l, nil
}

// For is the answer for fault index of repeat, if given.
func (l Leaders) For(index, repeat int) (LeaderAnswer, bool) {
	for _, a := range l {
		if a.Index == index && a.Repeat == repeat {
			return a, true
		}
	}
	return LeaderAnswer{}, false
}

// WithLeader returns data with a recorded; the first answer for a fault
// stays (a retried write must not change whom the operator hits).
func WithLeader(data map[string]string, a LeaderAnswer) (map[string]string, error) {
	l, err := ReadLeaders(data)
	if err != nil {
		return data, err
	}
	if _, ok := l.For(a.Index, a.Repeat); ok {
		return data, nil
	}
	b, err := json.Marshal(append(l, a))
	if err != nil {
		return data, err
	}
	if data == nil {
		data = map[string]string{}
	}
	data[KeyLeaders] = string(b)
	return data, nil
}

// LeaderFault is a fault that targets leader: its index and its time.
type LeaderFault struct {
	Index int
	At    time.Duration
}

// LeaderFaults are spec.faults' leader faults, as --fault-leaders
// writes them: index@at,... ("" when there are none). Pure.
func LeaderFaults(fs []v1alpha1.Fault) string {
	var out []string
	for i, f := range fs {
		if f.Target == v1alpha1.FaultTarget(v1alpha1.RoleLeader) {
			out = append(out, fmt.Sprintf("%d@%s", i, f.At.Duration))
		}
	}
	return strings.Join(out, ",")
}

// ParseLeaderFaults reads --fault-leaders. Pure.
func ParseLeaderFaults(s string) ([]LeaderFault, error) {
	if s == "" {
		return nil, nil
	}
	var out []LeaderFault
	for _, part := range strings.Split(s, ",") {
		i, at, ok := strings.Cut(part, "@")
		n, err := strconv.Atoi(i)
		d, derr := time.ParseDuration(at)
		if !ok || err != nil || derr != nil || n < 0 || d < 0 {
			return nil, fmt.Errorf("--fault-leaders: %q is not index@duration (e.g. 0@40s)", part)
		}
		out = append(out, LeaderFault{Index: n, At: d})
	}
	return out, nil
}

// LeaderTarget is the fault target of Kafka node id (Strimzi's pods end
// in their node id, as broker-<n> resolves).
func LeaderTarget(nodeID int32) v1alpha1.FaultTarget {
	return v1alpha1.FaultTarget(fmt.Sprintf("%s-%d", v1alpha1.RoleBroker, nodeID))
}

// pulsarBrokerHost is the first DNS label of a broker the Apache Pulsar
// chart runs: its StatefulSet's pod, <release>-broker-<ordinal>, which
// the brokers advertise as their host (the chart sets no
// advertisedAddress, so a broker advertises its pod's FQDN).
var pulsarBrokerHost = regexp.MustCompile(`^[a-z0-9-]*-broker-(\d+)$`)

// PulsarOwnerTarget is the fault target of the Pulsar broker whose
// service URL (pulsar://<pod>.<service>.<namespace>.svc...:6650, as a
// topic lookup answers) names its pod: broker-<ordinal>. A URL whose host
// is no chart broker's pod (an IP, another naming) cannot be mapped, and
// the error says so. Pure.
func PulsarOwnerTarget(brokerURL string) (v1alpha1.FaultTarget, error) {
	u, err := url.Parse(brokerURL)
	if err != nil || u.Hostname() == "" {
		return "", fmt.Errorf("the owner's service URL %q has no host", brokerURL)
	}
	label, _, _ := strings.Cut(u.Hostname(), ".")
	m := pulsarBrokerHost.FindStringSubmatch(label)
	if m == nil {
		return "", fmt.Errorf("the owner %s advertises %s, which names no broker pod of the chart (<release>-broker-<n>): name the broker (broker-<n>)", brokerURL, u.Hostname())
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return "", err
	}
	return v1alpha1.FaultTarget(fmt.Sprintf("%s-%d", v1alpha1.RoleBroker, n)), nil
}
