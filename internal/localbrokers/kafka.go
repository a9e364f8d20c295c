package localbrokers

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// DefaultKafkaVersion is the newest Kafka 4.x that resolves from Maven
// Central. 4.4.0 is listed there, but its kafka_2.13 pom depends on
// kafka-tools-api:4.4.0, which Central does not have, so it cannot be
// fetched; 4.3.1 is also Strimzi 1.2's default, so local and managed runs
// use the same broker.
const DefaultKafkaVersion = "4.3.1"

// KafkaOptions configure StartKafka.
type KafkaOptions struct {
	// Brokers is the number of broker nodes (default 3). Node 1 is a
	// combined controller+broker, nodes 2..N are brokers only, so a
	// replication factor of N with min.insync.replicas N-1 is real.
	Brokers int
	// BrokerConfig is added to every node's server.properties, e.g.
	// EffectiveDurability.Kafka.Broker. It may not set the listener, node
	// and quorum keys StartKafka owns.
	BrokerConfig map[string]string
	// Dir holds each node's config, data and log in node-<id>/ (default: a
	// new temporary directory, removed by Stop). A given Dir is kept after
	// Stop, for inspection; its node-<id>/ directories are recreated on
	// start.
	Dir string
	// Version of Kafka on Maven Central (default DefaultKafkaVersion).
	Version string
	// Detached starts JVMs that outlive the Go process (hack script).
	Detached bool
	// ReadyTimeout bounds the wait for all brokers to register (default
	// 4 minutes: 3 brokers take ~20 s on an idle 2-core machine, but were
	// seen taking almost 2 minutes on one shared with other JVMs).
	ReadyTimeout time.Duration
	// Log, if set, receives progress lines.
	Log func(format string, args ...any)
	// Host is the address the brokers listen on and advertise (default
	// 127.0.0.1); see host.go.
	Host string
	// Env is added to the environment of the broker JVMs (not of the
	// storage format tool), e.g. syncdelay.Env for the durability
	// experiment.
	Env []string
	// NodeJVMArgs, if set, returns extra JVM options for node id (e.g. a
	// JMX exporter agent on a port of its own).
	NodeJVMArgs func(id int) []string
	// JVM replaces DefaultJVMArgs: the heap, collector and compiler
	// options of every node (e.g. Kafka's own -Xmx1g -XX:+UseG1GC ...).
	JVM []string
	// Listeners are secured client listeners every broker opens beside
	// the plaintext one (kafka_security.go); ListenerBootstrap gives their
	// addresses.
	Listeners []KafkaListener
	// SeparateController runs the KRaft controller as a JVM of its own
	// (Kafka.Controller, process kafka-controller, node id Brokers+1)
	// and node 1 as a broker only. Without it node 1 is the one
	// controller, and a killed node 1 leaves the cluster without one for
	// good: no partition gets a new leader again. Local mode sets it for
	// a run with faults, so any broker (the leader, whichever it is) can
	// be killed and the others take over, as in a cluster of three
	// controllers.
	SeparateController bool
}

// KafkaNode is one started Kafka node.
type KafkaNode struct {
	ID   int
	Port int
	// ListenerPorts are the ports of the secured listeners, by name.
	ListenerPorts map[string]int
	Process       *Process

	// jvm and detached are how Process was started, for Restart.
	jvm      JVM
	detached bool
}

// Kafka is a running local Kafka cluster.
type Kafka struct {
	// Nodes are the brokers, node ids 1..n (node 1 the controller too
	// unless Controller is set).
	Nodes []KafkaNode
	// Controller is the KRaft controller when it runs apart
	// (KafkaOptions.SeparateController); nil when node 1 is it.
	Controller     *KafkaNode
	ControllerPort int
	Dir            string
	Version        string

	// Setup is how the nodes run, for the results.
	Setup Setup

	removeDir bool
	stopped   stopper
	host      string
	// procMu guards the nodes' Process while a run goes on: Restart
	// replaces one as local mode's fault injector looks for its target
	// (NodeProcess).
	procMu sync.Mutex
}

// kafkaOwnedKeys are set per node by StartKafka; BrokerConfig may not
// override them or the cluster would not form.
var kafkaOwnedKeys = map[string]bool{
	"process.roles": true, "node.id": true, "listeners": true, "advertised.listeners": true,
	"controller.listener.names": true, "listener.security.protocol.map": true,
	"inter.broker.listener.name": true, "controller.quorum.bootstrap.servers": true,
	"controller.quorum.voters": true, "log.dirs": true, "metadata.log.dir": true,
}

// KafkaArtifacts are the Maven artifacts of a Kafka broker. Kafka's poms
// bring slf4j-api 1.7.36 and log4j-core, but no SLF4J binding, so without
// log4j-slf4j-impl (the binding for SLF4J 1.x; the slf4j2 one is silently
// ignored by slf4j-api 1.7) every broker log line is dropped. Log4j versions
// follow kafka-server's pom (2.25.4 for 4.3.x).
func KafkaArtifacts(version string) []Artifact {
	const log4j = "2.25.4"
	return []Artifact{
		Artifact("org.apache.kafka:kafka_2.13:" + version),
		Artifact("org.apache.kafka:kafka-server:" + version),
		Artifact("org.apache.logging.log4j:log4j-slf4j-impl:" + log4j),
		Artifact("org.apache.logging.log4j:log4j-core:" + log4j),
	}
}

// FetchKafka fetches the Kafka jars into CacheDir()/kafka-<version> and
// returns the classpath.
func FetchKafka(ctx context.Context, version string) (string, error) {
	if version == "" {
		version = DefaultKafkaVersion
	}
	lib, err := FetchJars(ctx, filepath.Join(CacheDir(), "kafka-"+version), KafkaArtifacts(version)...)
	if err != nil {
		return "", err
	}
	return Classpath(lib)
}

// StartKafka formats and starts a KRaft cluster on 127.0.0.1 with free ports
// and waits until every broker is registered. On error every started JVM is
// stopped again.
func StartKafka(ctx context.Context, o KafkaOptions) (_ *Kafka, err error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	logf := o.Log
	for key := range o.BrokerConfig {
		if kafkaOwnedKeys[key] {
			return nil, fmt.Errorf("KafkaOptions.BrokerConfig[%q] is set by StartKafka per node; remove it", key)
		}
	}
	if err := checkListeners(o.Listeners); err != nil {
		return nil, err
	}
	start := time.Now()
	cp, err := FetchKafka(ctx, o.Version)
	if err != nil {
		return nil, err
	}
	logf("kafka %s jars ready after %s", o.Version, time.Since(start).Round(time.Millisecond))

	k := &Kafka{Version: o.Version, host: o.Host}
	if k.Dir, k.removeDir, err = clusterDir(o.Dir, "streambench-kafka-"); err != nil {
		if k.removeDir {
			_ = os.RemoveAll(k.Dir)
		}
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = k.Stop()
		}
	}()
	ports, err := FreePorts(o.Brokers + 1 + o.Brokers*len(o.Listeners))
	if err != nil {
		return nil, err
	}
	k.ControllerPort = ports[o.Brokers]
	if err := writeKeystores(k.Dir, o.Listeners); err != nil {
		return nil, err
	}
	log4j := filepath.Join(k.Dir, "log4j2.properties")
	if err := os.WriteFile(log4j, []byte(kafkaLog4j), 0o644); err != nil {
		return nil, err
	}
	clusterID, err := kafkaUUID()
	if err != nil {
		return nil, err
	}
	jvm := DefaultJVMArgs
	if o.JVM != nil {
		jvm = o.JVM
	}
	k.Setup = Setup{JVM: append([]string(nil), jvm...), Config: kafkaSettings(o.Brokers, o.BrokerConfig)}
	k.Setup.readJava(ctx, logf)
	jvmArgs := append(append([]string{}, jvm...), "-Dlog4j2.configurationFile="+log4j)

	// Format every node's storage; the runs are independent, so in
	// parallel (each is a JVM start of a few seconds).
	props := make([]string, o.Brokers)
	for i := range props {
		id := i + 1
		nodeDir := filepath.Join(k.Dir, "node-"+strconv.Itoa(id))
		// Ports and the cluster id are new on every start, so old data
		// could never be reused: a local cluster always starts empty.
		if err := os.RemoveAll(nodeDir); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(nodeDir, 0o755); err != nil {
			return nil, err
		}
		props[i] = filepath.Join(nodeDir, "server.properties")
		settings := kafkaNodeSettingsRoles(id, ports[i], k.ControllerPort, o.Brokers, filepath.Join(nodeDir, "data"), o.BrokerConfig, id == 1 && !o.SeparateController)
		lports := map[string]int{}
		for j, l := range o.Listeners {
			lports[l.Name] = ports[o.Brokers+1+j*o.Brokers+i]
		}
		addListeners(settings, o.Listeners, lports, k.hostname(), k.Dir)
		text := kafkaPropertiesOnHost(properties("", settings), o.Host)
		if err := os.WriteFile(props[i], []byte(text), 0o600); err != nil {
			return nil, err
		}
		k.Nodes = append(k.Nodes, KafkaNode{ID: id, Port: ports[i], ListenerPorts: lports})
	}
	// The controller of its own is formatted and started last: props[i]
	// for i < Brokers stay the brokers'.
	quorum := 0 // the index in props of the node formatted as the quorum
	if o.SeparateController {
		id := o.Brokers + 1
		nodeDir := filepath.Join(k.Dir, "node-controller")
		if err := os.RemoveAll(nodeDir); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(nodeDir, 0o755); err != nil {
			return nil, err
		}
		path := filepath.Join(nodeDir, "server.properties")
		text := kafkaPropertiesOnHost(properties("", kafkaControllerSettings(id, k.ControllerPort, o.Brokers, filepath.Join(nodeDir, "data"), o.BrokerConfig)), o.Host)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			return nil, err
		}
		props = append(props, path)
		k.Controller = &KafkaNode{ID: id, Port: k.ControllerPort}
		quorum = len(props) - 1
	}
	fmtStart := time.Now()
	errs := make([]error, len(props))
	var wg sync.WaitGroup
	for i := range props {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			// A controller formatted with --standalone bootstraps a dynamic
			// quorum of itself (KIP-853); that is why the nodes use
			// controller.quorum.bootstrap.servers, not the static
			// controller.quorum.voters, which Kafka refuses together with
			// --standalone.
			args := []string{"format", "-t", clusterID, "-c", props[i], "--ignore-formatted"}
			if i == quorum {
				// SCRAM credentials live in the metadata log, which the
				// controller bootstraps from its formatted storage.
				args = append(append(args, "--standalone"), scramArgs(o.Listeners)...)
			}
			errs[i] = runKafkaTool(ctx, cp, jvmArgs, "kafka.tools.StorageTool", args...)
		}(i)
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	logf("kafka storage formatted in %s", time.Since(fmtStart).Round(time.Millisecond))

	nodes := make([]*KafkaNode, 0, len(props))
	if k.Controller != nil {
		// First, so the brokers find a quorum to register with.
		nodes = append(nodes, k.Controller)
	}
	for i := range k.Nodes {
		nodes = append(nodes, &k.Nodes[i])
	}
	for _, n := range nodes {
		name, prop := "kafka-"+strconv.Itoa(n.ID), props[n.ID-1]
		if n == k.Controller {
			name = "kafka-controller"
		}
		j := JVM{
			Name: name, Classpath: cp, Main: "kafka.Kafka",
			Args: []string{prop}, JVMArgs: append(slices.Clone(nodeJVMArgs(jvmArgs, o.NodeJVMArgs, n.ID)), oauthJVMArgs(o.Listeners)...), Dir: filepath.Dir(prop), Env: o.Env,
			GCLog: filepath.Join(filepath.Dir(prop), "gc.log"),
		}
		n.jvm, n.detached = j, o.Detached
		if o.Detached {
			n.Process, err = StartJVMDetached(j)
		} else {
			n.Process, err = StartJVM(j)
		}
		if err != nil {
			return nil, err
		}
		logf("%s (node %d) started, pid %d, port %d, log %s", name, n.ID, n.Process.Pid, n.Port, n.Process.LogFile)
	}
	deadline := time.Now().Add(o.ReadyTimeout)
	for _, n := range k.Nodes {
		if err := n.Process.WaitPort(ctx, k.hostname()+":"+strconv.Itoa(n.Port), time.Until(deadline)); err != nil {
			return nil, err
		}
	}
	if err := k.waitRegistered(ctx, time.Until(deadline)); err != nil {
		return nil, err
	}
	logf("kafka cluster of %d brokers ready at %s after %s", o.Brokers, k.Bootstrap(), time.Since(start).Round(time.Millisecond))
	return k, nil
}

// KafkaNodeProperties is the server.properties of node id (1-based) of an
// n-node local cluster. Pure, for the table test.
func KafkaNodeProperties(id, port, controllerPort, n int, dataDir string, extra map[string]string) string {
	return properties("", kafkaNodeSettings(id, port, controllerPort, n, dataDir, extra))
}

// kafkaNodeSettings are KafkaNodeProperties as a map, for addListeners.
func kafkaNodeSettings(id, port, controllerPort, n int, dataDir string, extra map[string]string) map[string]string {
	return kafkaNodeSettingsRoles(id, port, controllerPort, n, dataDir, extra, id == 1)
}

// kafkaNodeSettingsRoles are a broker's settings, the controller's too
// when controller is set.
func kafkaNodeSettingsRoles(id, port, controllerPort, n int, dataDir string, extra map[string]string, controller bool) map[string]string {
	p := kafkaSettings(n, extra)
	for k, v := range map[string]string{
		"node.id":                             strconv.Itoa(id),
		"controller.quorum.bootstrap.servers": "127.0.0.1:" + strconv.Itoa(controllerPort),
		"controller.listener.names":           "CONTROLLER",
		"inter.broker.listener.name":          "PLAINTEXT",
		"listener.security.protocol.map":      "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
		"log.dirs":                            dataDir,
	} {
		p[k] = v
	}
	if controller {
		p["process.roles"] = "broker,controller"
		p["listeners"] = fmt.Sprintf("PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d", port, controllerPort)
		p["advertised.listeners"] = fmt.Sprintf("PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d", port, controllerPort)
	} else {
		p["process.roles"] = "broker"
		p["listeners"] = fmt.Sprintf("PLAINTEXT://127.0.0.1:%d", port)
		p["advertised.listeners"] = p["listeners"]
	}
	return p
}

// kafkaControllerSettings are the settings of a controller-only node
// (KafkaOptions.SeparateController): the controller listener alone, no
// broker listener. The cluster-wide settings (internal topics' sizes,
// extra) are written too: a controller applies the ones it knows (topic
// defaults, which the controller decides for a created topic) and
// ignores the rest.
func kafkaControllerSettings(id, controllerPort, n int, dataDir string, extra map[string]string) map[string]string {
	p := kafkaSettings(n, extra)
	for k, v := range map[string]string{
		"node.id":                             strconv.Itoa(id),
		"process.roles":                       "controller",
		"controller.quorum.bootstrap.servers": "127.0.0.1:" + strconv.Itoa(controllerPort),
		"controller.listener.names":           "CONTROLLER",
		"listener.security.protocol.map":      "CONTROLLER:PLAINTEXT",
		"listeners":                           fmt.Sprintf("CONTROLLER://127.0.0.1:%d", controllerPort),
		"advertised.listeners":                fmt.Sprintf("CONTROLLER://127.0.0.1:%d", controllerPort),
		"log.dirs":                            dataDir,
	} {
		p[k] = v
	}
	return p
}

// kafkaSettings are the settings every node of an n-node local cluster
// gets beyond Kafka's defaults, without the node's identity, listeners
// and paths: extra (the caller's, e.g. the durability's) over streambench's
// own.
func kafkaSettings(n int, extra map[string]string) map[string]string {
	p := map[string]string{
		// Internal topics must fit the cluster, or consumer groups never
		// get a coordinator on a 1-node cluster.
		"offsets.topic.replication.factor":                 strconv.Itoa(min(3, n)),
		"transaction.state.log.replication.factor":         strconv.Itoa(min(3, n)),
		"transaction.state.log.min.isr":                    strconv.Itoa(min(2, n)),
		"share.coordinator.state.topic.replication.factor": strconv.Itoa(min(3, n)),
		"share.coordinator.state.topic.min.isr":            strconv.Itoa(min(2, n)),
		"offsets.topic.num.partitions":                     "10",
		// Tests join groups right after start; the default 3 s delay only
		// helps large groups forming at once.
		"group.initial.rebalance.delay.ms": "0",
		"auto.create.topics.enable":        "false",
		"delete.topic.enable":              "true",
		"num.network.threads":              "2",
		"num.io.threads":                   "4",
	}
	for key, v := range extra {
		if !kafkaOwnedKeys[key] {
			p[key] = v
		}
	}
	return p
}

// Bootstrap is the comma-separated broker list for clients.
func (k *Kafka) Bootstrap() string {
	s := make([]string, len(k.Nodes))
	for i, n := range k.Nodes {
		s[i] = k.hostname() + ":" + strconv.Itoa(n.Port)
	}
	return strings.Join(s, ",")
}

// LogFiles are the nodes' log files (the brokers', then a separate
// controller's).
func (k *Kafka) LogFiles() []string {
	var s []string
	for _, n := range k.all() {
		if n.Process != nil {
			s = append(s, n.Process.LogFile)
		}
	}
	return s
}

// Pids are the nodes' process ids (for the hack script's pid file): the
// brokers' in node order, then a separate controller's.
func (k *Kafka) Pids() []int {
	k.procMu.Lock()
	defer k.procMu.Unlock()
	var s []int
	for _, n := range k.all() {
		if n.Process != nil {
			s = append(s, n.Process.Pid)
		}
	}
	return s
}

// all are the brokers, then a separate controller.
func (k *Kafka) all() []KafkaNode {
	if k.Controller == nil {
		return k.Nodes
	}
	return append(slices.Clone(k.Nodes), *k.Controller)
}

// Stop stops every node by its pid (brokers first, the controller last, so
// brokers can deregister) and removes a temporary Dir. Idempotent.
func (k *Kafka) Stop() error {
	return k.stopped.do(func() error {
		var errs []error
		var wg sync.WaitGroup
		var mu sync.Mutex
		// The brokers, the controller last: node 1 when it is the
		// controller, else the controller of its own.
		brokers, controller := k.Nodes, k.Controller
		if controller == nil && len(brokers) > 0 {
			brokers, controller = brokers[1:], &brokers[0]
		}
		for i := len(brokers) - 1; i >= 0; i-- {
			if p := brokers[i].Process; p != nil {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := p.Stop(StopGrace); err != nil {
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
					}
				}()
			}
		}
		wg.Wait()
		if controller != nil && controller.Process != nil {
			if err := controller.Process.Stop(StopGrace); err != nil {
				errs = append(errs, err)
			}
		}
		if k.removeDir {
			if err := os.RemoveAll(k.Dir); err != nil {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	})
}

// waitRegistered polls the cluster metadata until every broker is listed
// (i.e. registered with the controller and unfenced).
func (k *Kafka) waitRegistered(ctx context.Context, timeout time.Duration) error {
	// A short MetadataMinAge: kadm may answer from cached metadata for up
	// to 5 s by default, which would only delay readiness.
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(k.Bootstrap(), ",")...), kgo.MetadataMinAge(250*time.Millisecond))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last string
	for {
		rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
		bs, err := adm.ListBrokers(rctx)
		rcancel()
		if err == nil && len(bs) == len(k.Nodes) {
			return nil
		}
		if err != nil {
			last = err.Error()
		} else {
			last = fmt.Sprintf("%d of %d brokers registered", len(bs), len(k.Nodes))
		}
		for _, n := range k.all() {
			if n.Process.Exited() {
				return fmt.Errorf("kafka node %d exited while waiting for the cluster; log %s:\n%s", n.ID, n.Process.LogFile, n.Process.LogTail(3000))
			}
		}
		select {
		case <-ctx.Done():
			var tails strings.Builder
			for _, n := range k.Nodes {
				fmt.Fprintf(&tails, "--- %s:\n%s\n", n.Process.LogFile, n.Process.LogTail(1500))
			}
			return fmt.Errorf("kafka: not all %d brokers registered within %s (%s)\n%s", len(k.Nodes), timeout, last, tails.String())
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// runKafkaTool runs a Kafka command-line tool class to completion.
func runKafkaTool(ctx context.Context, cp string, jvmArgs []string, main string, args ...string) error {
	java, err := exec.LookPath("java")
	if err != nil {
		return CheckJava()
	}
	share := shareClasses(classArchives(), java, cp, main, jvmArgs, false)
	all := append(append(append(append([]string{}, jvmArgs...), share.opts...), "-cp", cp, main), args...)
	cmd := exec.CommandContext(ctx, java, all...)
	cmd.SysProcAttr = sysProcAttr(false)
	out, err := cmd.CombinedOutput()
	share.end(cmd.ProcessState)
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", main, strings.Join(args, " "), err, tail(string(out), 3000))
	}
	return nil
}

// kafkaUUID is a random Kafka Uuid in its string form (URL-safe base64 of 16
// bytes, no padding), as `kafka-storage random-uuid` prints. Like Kafka's
// Uuid.randomUuid it never starts with '-', which the tools' argument
// parser would take for an option (`-t -abc...` fails).
func kafkaUUID() (string, error) {
	b := make([]byte, 16)
	for {
		if _, err := rand.Read(b); err != nil {
			return "", err
		}
		if s := base64.RawURLEncoding.EncodeToString(b); s[0] != '-' {
			return s, nil
		}
	}
}

// kafkaLog4j sends INFO to stdout, which StartJVM writes to the node's log
// file, and quiets the chattiest loggers.
const kafkaLog4j = `status = warn
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = OUT
logger.state.name = state.change.logger
logger.state.level = WARN
logger.request.name = kafka.request.logger
logger.request.level = WARN
`

func nodeJVMArgs(base []string, extra func(int) []string, id int) []string {
	if extra == nil {
		return base
	}
	return append(append([]string{}, base...), extra(id)...)
}
