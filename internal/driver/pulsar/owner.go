package pulsar

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/streambench/streambench-operator/internal/driver"
)

// LookupOwner asks the admin API at adminURL which broker owns topic (a
// persistent topic's path: tenant/namespace/name) now: the broker a
// producer of it is served by, Pulsar's counterpart of a Kafka partition's
// leader. It is the broker's service URL as the brokers advertise it
// (pulsar://host:6650), with the run's TLS and credentials (sec).
func LookupOwner(ctx context.Context, adminURL string, sec *driver.Security, topic string) (string, error) {
	c, _, err := AdminHTTP(sec)
	if err != nil {
		return "", err
	}
	url := strings.TrimRight(adminURL, "/") + "/lookup/v2/topic/persistent/" + topic
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", fmt.Errorf("looking up the owner of %s: %w", topic, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("looking up the owner of %s: HTTP %d %s", topic, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	var l struct {
		BrokerURL    string `json:"brokerUrl"`
		BrokerURLTLS string `json:"brokerUrlTls"`
	}
	if err := json.Unmarshal(body, &l); err != nil {
		return "", fmt.Errorf("looking up the owner of %s: %w (%s)", topic, err, body)
	}
	if l.BrokerURL == "" {
		l.BrokerURL = l.BrokerURLTLS
	}
	if l.BrokerURL == "" {
		return "", fmt.Errorf("looking up the owner of %s: the answer names no broker (%s)", topic, body)
	}
	return l.BrokerURL, nil
}

// FirstTopic is the path of the topic partition a run's writes to its
// first topic land on first (topic-0, or its partition 0 when the workload
// partitions it), as TopicName and CreateTopics name them.
func FirstTopic(runID string, partitions int32) string {
	t := Namespace(runID) + "/topic-0"
	if partitions > 1 {
		t += "-partition-0"
	}
	return t
}
