package localbrokers

import (
	"fmt"
	"net"
	"strings"
)

// Brokers listen on loopback by default: tests and local runs are clients on
// the same host. KafkaOptions.Host and PulsarOptions.Host move them to an
// address that clients elsewhere on this machine can reach — pods of the
// local cluster reach the host at the CNI bridge gateway (10.244.0.1), pods
// of kind at the Docker network's gateway. The brokers advertise the same
// address, because clients connect where the broker says, not where they
// bootstrapped: Kafka's metadata and Pulsar's topic lookups would otherwise
// send a pod to 127.0.0.1, its own loopback.
const loopbackHost = "127.0.0.1"

func hostOrLoopback(h string) string {
	if h == "" {
		return loopbackHost
	}
	return h
}

func (k *Kafka) hostname() string  { return hostOrLoopback(k.host) }
func (p *Pulsar) hostname() string { return hostOrLoopback(p.host) }

// checkHost accepts an empty host (loopback) or one IP address: a listener
// on a name would follow whatever the name resolves to.
func checkHost(field, h string) error {
	if h == "" {
		return nil
	}
	if net.ParseIP(h) == nil || strings.Contains(h, ":") {
		return fmt.Errorf("localbrokers: %s %q must be an IPv4 address of this host, e.g. 10.244.0.1", field, h)
	}
	return nil
}

// kafkaPropertiesOnHost moves a node's client listener (PLAINTEXT, also the
// inter-broker listener) and its advertised address to host. The controller
// listener stays on loopback: only the brokers of this host talk to it.
func kafkaPropertiesOnHost(props, host string) string {
	if host == "" || host == loopbackHost {
		return props
	}
	return strings.ReplaceAll(props, "PLAINTEXT://"+loopbackHost+":", "PLAINTEXT://"+host+":")
}

// pulsarHostConfig is the standalone's listen and advertised address; the
// web service (admin API) binds to bindAddress too.
func pulsarHostConfig(host string) map[string]string {
	if host == "" {
		return nil
	}
	return map[string]string{"bindAddress": host, "advertisedAddress": host}
}
