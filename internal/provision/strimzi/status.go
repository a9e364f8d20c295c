package strimzi

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/streambench/streambench-operator/internal/provision/podsched"
)

// Condition types Strimzi sets on a Kafka: Ready (True) after a
// successful reconciliation, NotReady (True) while it deploys ("Creating")
// or after a failed one (reason = the error's class), Warning (True) for
// problems that do not stop the cluster.
const (
	conditionReady    = "Ready"
	conditionNotReady = "NotReady"
)

// Ready reports whether the Kafka can take the workload: its Ready
// condition is True and its status describes the current spec
// (status.observedGeneration == metadata.generation; a Ready of the
// previous generation says nothing about the spec just applied). When it
// is not ready, reason says what is missing, e.g.
// "Kafka run-a: NotReady=True (Creating: Kafka cluster is being deployed)".
func Ready(kafka *unstructured.Unstructured) (ready bool, reason string) {
	return readyAtGeneration(kafka, "Kafka",
		"the Strimzi cluster operator has not reported on it; check that it runs and watches namespace "+kafka.GetNamespace(),
		"the Strimzi cluster operator")
}

// readyAtGeneration is Strimzi's readiness of any of its resources: a
// Ready=True condition (else the NotReady one's words, else noCondition)
// and status.observedGeneration at metadata.generation; who names the
// operator that reconciles it.
func readyAtGeneration(obj *unstructured.Unstructured, kind, noCondition, who string) (ready bool, reason string) {
	prefix := fmt.Sprintf("%s %s: ", kind, obj.GetName())
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	c, found := condition(conds, conditionReady)
	if !found || c.status != "True" {
		if !found {
			c, found = condition(conds, conditionNotReady)
		}
		if !found {
			return false, prefix + "no Ready condition yet (" + noCondition + ")"
		}
		return false, prefix + c.String()
	}
	observed, ok := int64Field(obj.Object, "status", "observedGeneration")
	if gen := obj.GetGeneration(); !ok || observed != gen {
		seen := "none"
		if ok {
			seen = strconv.FormatInt(observed, 10)
		}
		return false, fmt.Sprintf("%sReady=True is stale: status.observedGeneration is %s, metadata.generation is %d (%s has not reconciled the current spec yet)", prefix, seen, gen, who)
	}
	return true, ""
}

// Failed reports whether Strimzi gave up on the Kafka's current spec: a
// NotReady=True condition for the current generation whose reason is an
// error (Strimzi puts the exception's class there) rather than "Creating",
// which it says while it deploys. A spec Strimzi refuses (its reason names
// an invalid or unsupported resource or configuration, e.g.
// UnsupportedKafkaVersionException) fails at once: no retry changes it.
// Any other error fails once it has stood for persistFor (Strimzi retries
// every two minutes by default, so a transient one — an API hiccup, a
// timeout while a first image pull or a busy node slows the pods — is
// replaced before that); timeouts are never failures by themselves, the
// provisioning timeout bounds them. why names the Kafka, the reason and
// Strimzi's message.
func Failed(kafka *unstructured.Unstructured, now time.Time) (failed bool, why string) {
	conds, _, _ := unstructured.NestedSlice(kafka.Object, "status", "conditions")
	c, found := condition(conds, conditionNotReady)
	if !found || c.status != "True" || c.reason == "" || c.reason == "Creating" || strings.Contains(c.reason, "Timeout") {
		return false, ""
	}
	if observed, ok := int64Field(kafka.Object, "status", "observedGeneration"); !ok || observed != kafka.GetGeneration() {
		return false, ""
	}
	refused := strings.HasPrefix(c.reason, "Invalid") || strings.HasPrefix(c.reason, "Unsupported") || strings.Contains(c.reason, "Configuration")
	if !refused && (c.since.IsZero() || now.Sub(c.since) < persistFor) {
		return false, ""
	}
	return true, fmt.Sprintf("Kafka %s: the Strimzi cluster operator could not deploy it: %s", kafka.GetName(), c)
}

// persistFor is how long an error that Strimzi may yet recover from must
// stand before the run fails on it: over two of Strimzi's default
// two-minute reconciliations.
const persistFor = 5 * time.Minute

// Bootstrap returns the bootstrap servers of the Kafka's listener l (the
// run's, found by SelectListener) from status.listeners[name=l.Name], which
// Strimzi fills with <cluster>-kafka-bootstrap.<namespace>.svc:<port>.
func Bootstrap(kafka *unstructured.Unstructured, l Listener) (string, error) {
	listeners, _, _ := unstructured.NestedSlice(kafka.Object, "status", "listeners")
	if len(listeners) == 0 {
		return "", fmt.Errorf("Kafka %s has no status.listeners yet; wait until it is Ready", kafka.GetName())
	}
	var names []string
	for _, sl := range listeners {
		m, ok := sl.(map[string]any)
		if !ok {
			continue
		}
		name, _ := m["name"].(string)
		if name != l.Name {
			names = append(names, strconv.Quote(name))
			continue
		}
		if bs, _ := m["bootstrapServers"].(string); bs != "" {
			return bs, nil
		}
		return "", fmt.Errorf("Kafka %s: status.listeners[name=%s] has no bootstrapServers yet; wait until it is Ready", kafka.GetName(), l.Name)
	}
	return "", fmt.Errorf("Kafka %s: status.listeners has no listener named %q (found %s); spec.kafka.listeners must include the %s listener on port %d", kafka.GetName(), l.Name, strings.Join(names, ", "), l.Name, l.Port)
}

type kafkaCondition struct {
	typ, status, reason, message string
	// since is lastTransitionTime (zero when absent or unreadable).
	since time.Time
}

func (c kafkaCondition) String() string {
	s := c.typ + "=" + c.status
	switch {
	case c.reason != "" && c.message != "":
		s += " (" + c.reason + ": " + c.message + ")"
	case c.reason != "":
		s += " (" + c.reason + ")"
	case c.message != "":
		s += " (" + c.message + ")"
	}
	return s
}

// condition finds the condition of type typ in status.conditions.
func condition(conds []any, typ string) (kafkaCondition, bool) {
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		if t, _ := m["type"].(string); t != typ {
			continue
		}
		str := func(k string) string { s, _ := m[k].(string); return s }
		since, _ := time.Parse(time.RFC3339, str("lastTransitionTime"))
		return kafkaCondition{typ: typ, status: str("status"), reason: str("reason"), message: str("message"), since: since}, true
	}
	return kafkaCondition{}, false
}

// int64Field reads an integer field. Objects decoded by client-go hold
// int64; float64 is accepted too, for objects decoded by encoding/json.
func int64Field(obj map[string]any, fields ...string) (int64, bool) {
	v, found, err := unstructured.NestedFieldNoCopy(obj, fields...)
	if !found || err != nil {
		return 0, false
	}
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case float64:
		return int64(n), n == float64(int64(n))
	}
	return 0, false
}

// UnschedulableBrokers says which of a cluster's broker pods (selected
// by BrokerPodLabels) the scheduler cannot place, and why, in a sentence
// for the run's status; "" when none.
func UnschedulableBrokers(pods []corev1.Pod) string {
	stuck := podsched.Unschedulable(pods)
	if len(stuck) == 0 {
		return ""
	}
	return fmt.Sprintf("broker pods cannot be scheduled (%s); every broker needs a node of its own (a required anti-affinity keeps two off one node, so that replicas are on different machines): add nodes that match spec.cluster.managed.placement, or lower spec.cluster.managed.brokers",
		podsched.List(stuck))
}
