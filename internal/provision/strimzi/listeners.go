package strimzi

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// ClientNeeds is what a run's clients need of an existing Strimzi
// cluster's listener: TLS or not, and how they authenticate.
type ClientNeeds struct {
	TLS bool
	// Mechanism is the SASL mechanism; "" for none.
	Mechanism v1alpha1.AuthMechanism
	// ClientCertificate: the clients present a certificate (mutual TLS).
	ClientCertificate bool
}

// NeedsOf is what spec.cluster.existing asks of a listener.
func NeedsOf(e *v1alpha1.ExistingCluster) ClientNeeds {
	var n ClientNeeds
	if e.TLS != nil {
		n.TLS = true
		n.ClientCertificate = e.TLS.ClientCertificate != nil
	}
	if a := e.Authentication; a != nil {
		switch u := a.StrimziKafkaUser; {
		case u != nil && u.Type == v1alpha1.KafkaUserTLS:
			n.ClientCertificate = true
		case u != nil:
			n.Mechanism = v1alpha1.AuthScramSHA512
		default:
			n.Mechanism = a.Mechanism
		}
	}
	return n
}

func (n ClientNeeds) String() string {
	s := "a plaintext"
	if n.TLS {
		s = "a TLS"
	}
	switch {
	case n.Mechanism != "":
		return s + " client with SASL " + string(n.Mechanism)
	case n.ClientCertificate:
		return s + " client with a client certificate (mutual TLS)"
	}
	return s + " client without authentication"
}

// want is what the listener's spec must say: tls, and the authentication
// types (Strimzi's) that serve the clients. custom serves any SASL
// mechanism (Strimzi cannot tell which), and a client certificate only
// when it is not SASL.
func (n ClientNeeds) want() (authTypes []string, sasl bool) {
	switch n.Mechanism {
	case v1alpha1.AuthScramSHA512:
		return []string{"scram-sha-512", "custom"}, true
	case v1alpha1.AuthOAuthBearer:
		return []string{"oauth", "custom"}, true
	case v1alpha1.AuthPlain:
		// Strimzi's oauth listener takes PLAIN with enablePlain.
		return []string{"oauth", "custom"}, true
	case "":
		if n.ClientCertificate {
			return []string{"tls", "custom"}, false
		}
		return []string{""}, false
	}
	// SCRAM-SHA-256: only a custom listener has it.
	return []string{"custom"}, true
}

// Listener is one of a Kafka's spec.kafka.listeners.
type Listener struct {
	Name     string
	Port     int64
	Type     string // internal, cluster-ip, nodeport, loadbalancer, route, ingress
	TLS      bool
	AuthType string // "" when none
	// EnablePlain and EnableOAuthBearer are an oauth listener's; SASL a
	// custom one's.
	EnablePlain, EnableOAuthBearer, SASL bool
}

func (l Listener) String() string {
	auth := "no authentication"
	if l.AuthType != "" {
		auth = "authentication " + l.AuthType
	}
	return fmt.Sprintf("%s (%s, port %d, tls: %t, %s)", l.Name, l.Type, l.Port, l.TLS, auth)
}

// fits says whether clients with needs n can use l.
func (l Listener) fits(n ClientNeeds) bool {
	if l.TLS != n.TLS {
		return false
	}
	types, sasl := n.want()
	if !slices.Contains(types, l.AuthType) {
		return false
	}
	switch l.AuthType {
	case "custom":
		return l.SASL == sasl
	case "oauth":
		if n.Mechanism == v1alpha1.AuthPlain {
			return l.EnablePlain
		}
		return l.EnableOAuthBearer
	}
	return true
}

// Listeners reads spec.kafka.listeners.
func Listeners(kafka *unstructured.Unstructured) []Listener {
	raw, _, _ := unstructured.NestedSlice(kafka.Object, "spec", "kafka", "listeners")
	var out []Listener
	for _, r := range raw {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		l := Listener{EnableOAuthBearer: true}
		l.Name, _ = m["name"].(string)
		l.Type, _ = m["type"].(string)
		l.TLS, _ = m["tls"].(bool)
		l.Port, _ = int64Field(m, "port")
		if a, ok := m["authentication"].(map[string]any); ok {
			l.AuthType, _ = a["type"].(string)
			l.EnablePlain, _ = a["enablePlain"].(bool)
			if v, ok := a["enableOauthBearer"].(bool); ok {
				l.EnableOAuthBearer = v
			}
			l.SASL, _ = a["sasl"].(bool)
		}
		out = append(out, l)
	}
	return out
}

// typeRank orders the listeners that fit: the clients run in pods of the
// cluster, where internal listeners (a headless Service of the brokers, or
// cluster-ip) are reached directly, while an external one's address may
// not be reachable from inside it.
func typeRank(t string) int {
	switch t {
	case "internal":
		return 0
	case "cluster-ip":
		return 1
	}
	return 2
}

// SelectListener picks the listener of kafka that clients with needs n can
// use: the first in spec.kafka.listeners order among the internal ones,
// then cluster-ip, then external. With none, the error lists the
// listeners there are and what to change.
func SelectListener(kafka *unstructured.Unstructured, n ClientNeeds) (Listener, error) {
	ls := Listeners(kafka)
	best := -1
	for i, l := range ls {
		if l.fits(n) && (best < 0 || typeRank(l.Type) < typeRank(ls[best].Type)) {
			best = i
		}
	}
	if best >= 0 {
		return ls[best], nil
	}
	have := "none"
	if len(ls) > 0 {
		s := make([]string, len(ls))
		for i, l := range ls {
			s[i] = l.String()
		}
		have = strings.Join(s, "; ")
	}
	types, _ := n.want()
	add := fmt.Sprintf("tls: %t", n.TLS)
	if types[0] == "" {
		add += " and no authentication"
	} else {
		add += " and authentication type " + types[0]
		if n.Mechanism == v1alpha1.AuthPlain {
			add += " with enablePlain: true"
		}
		if types[0] == "custom" {
			add += " (sasl: true, with the mechanism in sasl.enabled.mechanisms)"
		}
	}
	return Listener{}, fmt.Errorf("Kafka %s/%s has no listener for %s (spec.cluster.existing.tls and authentication); its spec.kafka.listeners: %s. Add a listener with %s to the Kafka, or change spec.cluster.existing.tls and authentication to fit one of its listeners",
		kafka.GetNamespace(), kafka.GetName(), n, have, add)
}

// ListenerBootstrap is the bootstrap of the listener named name from
// status.listeners; "" with what is missing until Strimzi reports it.
func ListenerBootstrap(kafka *unstructured.Unstructured, name string) (bootstrap, waiting string) {
	listeners, _, _ := unstructured.NestedSlice(kafka.Object, "status", "listeners")
	for _, l := range listeners {
		m, ok := l.(map[string]any)
		if !ok {
			continue
		}
		if n, _ := m["name"].(string); n != name {
			continue
		}
		if bs, _ := m["bootstrapServers"].(string); bs != "" {
			return bs, ""
		}
	}
	return "", fmt.Sprintf("Kafka %s: status.listeners[name=%s] has no bootstrapServers yet; wait until it is Ready", kafka.GetName(), name)
}
