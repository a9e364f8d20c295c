package localbrokers

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// defaultReadyTimeout bounds a start when the options give no ReadyTimeout.
const defaultReadyTimeout = 4 * time.Minute

// startOptions are the options StartKafka and StartPulsar share, pointed
// at the fields of either's options so both are defaulted and checked
// alike.
type startOptions struct {
	// nodes is the count a start scales (Kafka brokers, Pulsar bookies),
	// named by nodesField in errors.
	nodes          *int
	nodesField     string
	defaultNodes   int32
	version        *string
	defaultVersion string
	readyTimeout   *time.Duration
	log            *func(format string, args ...any)
	host           string
	hostField      string
}

// apply fills the defaults (the spec's node count, the pinned version, the
// ready timeout, a silent log) and refuses a bad count or host.
func (s startOptions) apply() error {
	if *s.nodes == 0 {
		*s.nodes = int(s.defaultNodes)
	}
	if *s.nodes < 1 {
		return fmt.Errorf("localbrokers: %s (%d) must be at least 1", s.nodesField, *s.nodes)
	}
	if *s.version == "" {
		*s.version = s.defaultVersion
	}
	if *s.readyTimeout == 0 {
		*s.readyTimeout = defaultReadyTimeout
	}
	if *s.log == nil {
		*s.log = func(string, ...any) {}
	}
	return checkHost(s.hostField, s.host)
}

func (o *KafkaOptions) defaults() error {
	return startOptions{
		nodes: &o.Brokers, nodesField: "KafkaOptions.Brokers", defaultNodes: v1alpha1.DefaultBrokers,
		version: &o.Version, defaultVersion: DefaultKafkaVersion,
		readyTimeout: &o.ReadyTimeout, log: &o.Log, host: o.Host, hostField: "KafkaOptions.Host",
	}.apply()
}

func (o *PulsarOptions) defaults() error {
	return startOptions{
		nodes: &o.Bookies, nodesField: "PulsarOptions.Bookies", defaultNodes: v1alpha1.DefaultBookies,
		version: &o.Version, defaultVersion: DefaultPulsarVersion,
		readyTimeout: &o.ReadyTimeout, log: &o.Log, host: o.Host, hostField: "PulsarOptions.Host",
	}.apply()
}

// properties is a Java .properties file of m, keys sorted so the same
// settings always write the same file, after header.
func properties(header string, m map[string]string) string {
	var b strings.Builder
	b.WriteString(header)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, "%s=%s\n", k, m[k])
	}
	return b.String()
}

// stopper makes a cluster's Stop idempotent: the first call stops, every
// call returns what it returned.
type stopper struct {
	once sync.Once
	err  error
}

func (s *stopper) do(stop func() error) error {
	s.once.Do(func() { s.err = stop() })
	return s.err
}

// clusterDir is dir made absolute and created, or a new temporary
// directory (prefix*) that the cluster removes when it stops (temp true).
func clusterDir(dir, prefix string) (_ string, temp bool, err error) {
	if dir == "" {
		if dir, err = os.MkdirTemp("", prefix); err != nil {
			return "", false, err
		}
		temp = true
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return "", temp, err
	}
	return dir, temp, os.MkdirAll(dir, 0o755)
}
