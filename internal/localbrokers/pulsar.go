package localbrokers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultPulsarVersion is the newest Pulsar 4.0.x whose whole dependency tree
// resolves from Maven Central. 4.0.8's pulsar-broker is listed there, but
// it depends on org.apache.pulsar:jetcd-core-shaded:4.0.8, which Central does
// not have (it has 4.0.1 and 4.0.7 of that artifact), so 4.0.8 cannot be
// fetched.
const DefaultPulsarVersion = "4.0.7"

// PulsarOptions configure StartPulsar.
type PulsarOptions struct {
	// Dir holds the config, data and log (default: a new temporary
	// directory, removed by Stop). A given Dir is kept after Stop, for
	// inspection; its data is wiped on start.
	Dir string
	// Bookies is the number of bookies (default 3), so an ensemble of 3 with
	// write quorum 3 and ack quorum 2 is real replication.
	Bookies int
	// BrokerConfig is added to the broker configuration, e.g.
	// EffectiveDurability.Pulsar.Broker.
	BrokerConfig map[string]string
	// BookieConfig is applied to every bookie, e.g.
	// EffectiveDurability.Pulsar.Bookie (journal settings).
	BookieConfig map[string]string
	// Version of Pulsar on Maven Central (default DefaultPulsarVersion).
	Version string
	// BookieHTTP starts the first bookie's HTTP admin server (on
	// Pulsar.BookieHTTPPort), so tests can read back the configuration the
	// bookies really run with at /api/v1/config/server_config. The
	// standalone gives every bookie one configuration, so the other bookies
	// try the same port, log that it is taken, and run without HTTP (the
	// bookie ignores a failed HTTP start).
	BookieHTTP bool
	// Detached starts a JVM that outlives the Go process (hack script).
	Detached bool
	// ReadyTimeout bounds the wait for the admin API and a first topic
	// (default 4 minutes: the first start on a busy 2-core machine is slow).
	ReadyTimeout time.Duration
	// Log, if set, receives progress lines.
	Log func(format string, args ...any)
	// Host is the address the broker listens on and advertises (default
	// 127.0.0.1); see host.go.
	Host string
	// Env is added to the standalone JVM's environment, e.g. syncdelay.Env
	// for the durability experiment.
	Env []string
	// JVM replaces PulsarJVM: the heap, collector and compiler options
	// (the module openings Pulsar needs are always added).
	JVM []string
	// Security opens TLS ports and turns on token authentication
	// (pulsar_security.go); nil is plaintext and anonymous.
	Security *PulsarSecurity
	// BookieProcesses runs each bookie as its own JVM (pulsar_bookies.go,
	// PulsarBookieJVM) beside a standalone of ZooKeeper and the broker, so
	// a fault can kill one bookie and RestartBookie bring it back; by
	// default the bookies run inside the standalone's JVM, where no signal
	// can reach one alone.
	BookieProcesses bool
}

// Pulsar is a running local Pulsar standalone: one JVM with ZooKeeper, the
// bookies and one broker.
type Pulsar struct {
	Process        *Process
	BrokerPort     int
	WebPort        int
	ZooKeeperPort  int
	BookiePorts    []int
	BookieHTTPPort int
	Dir            string
	Version        string
	// Setup is how the standalone runs, for the results.
	Setup Setup
	// TLSBrokerPort and TLSWebPort are the TLS ports, when
	// PulsarOptions.Security has a certificate; 0 otherwise.
	TLSBrokerPort, TLSWebPort int

	removeDir bool
	stopped   stopper
	host      string
	detached  bool
	// procMu guards the separate bookies' processes (BookieProcesses),
	// which a restart replaces while a run reads them.
	procMu  sync.Mutex
	bookies []*pulsarBookie
	// adminToken authenticates StartPulsar's own admin requests when
	// Security turns tokens on.
	adminToken string
}

// pulsarOwnedKeys are set by StartPulsar; the config maps may not override
// them or the standalone would not come up where the endpoints say.
var pulsarOwnedKeys = map[string]bool{
	"clusterName": true, "brokerServicePort": true, "webServicePort": true,
	"brokerServicePortTls": true, "webServicePortTls": true,
	"bindAddress": true, "bindAddresses": true, "advertisedAddress": true, "advertisedListeners": true,
	"metadataStoreUrl": true, "configurationMetadataStoreUrl": true, "zookeeperServers": true,
	"bookiePort": true, "journalDirectory": true, "ledgerDirectories": true, "metadataServiceUri": true,
	"httpServerEnabled": true, "httpServerPort": true, "httpServerHost": true, "httpServerClass": true,
	"functionsWorkerEnabled": true,
}

// pulsarBaseConfig is what a small, honest local standalone needs. The
// standalone reads this one file twice: as the broker's configuration and as
// the base configuration of every bookie, so bookie keys go here too.
func pulsarBaseConfig() map[string]string {
	return map[string]string{
		"clusterName":                       "standalone",
		"bindAddress":                       "127.0.0.1",
		"advertisedAddress":                 "127.0.0.1",
		"allowLoopback":                     "true",
		"functionsWorkerEnabled":            "false",
		"transactionCoordinatorEnabled":     "false",
		"systemTopicEnabled":                "true",
		"topicLevelPoliciesEnabled":         "true",
		"allowAutoTopicCreation":            "true",
		"allowAutoTopicCreationType":        "non-partitioned",
		"brokerDeleteInactiveTopicsEnabled": "false",
		// A real 3-bookie default for the broker's own topics; benchmark
		// namespaces carry their own persistence policy.
		"managedLedgerDefaultEnsembleSize": "3",
		"managedLedgerDefaultWriteQuorum":  "3",
		"managedLedgerDefaultAckQuorum":    "2",
		// Small caches and thread pools: three bookies and a broker share
		// one small heap on a 2-core machine. None of these changes when a
		// write is acknowledged; the journal settings stay BookKeeper's
		// defaults unless BookieConfig sets them.
		"managedLedgerCacheSizeMB":                "64",
		"dbStorage_writeCacheMaxSizeMb":           "16",
		"dbStorage_readAheadCacheMaxSizeMb":       "16",
		"dbStorage_rocksDB_blockCacheSize":        "16777216",
		"journalPreAllocSizeMB":                   "4",
		"numAddWorkerThreads":                     "1",
		"numReadWorkerThreads":                    "1",
		"numHighPriorityWorkerThreads":            "1",
		"serverNumIOThreads":                      "2",
		"numJournalCallbackThreads":               "1",
		"diskUsageThreshold":                      "0.99",
		"diskUsageWarnThreshold":                  "0.98",
		"isRunningStandalone":                     "true",
		"brokerShutdownTimeoutMs":                 "3000",
		"loadBalancerEnabled":                     "false",
		"webSocketServiceEnabled":                 "false",
		"exposeTopicLevelMetricsInPrometheus":     "false",
		"bookkeeperClientExposeStatsToPrometheus": "false",
	}
}

// PulsarJVM is the standalone's heap, collector and compiler: Pulsar's
// own kind (bin/pulsar: a fixed heap, G1 with a 10 ms pause goal, C2), at
// 2 GiB. Chosen by hack/bench-jvm on this project's 2-core machines
// (docs/methodology.md): against a 1 GiB serial-collected, C1-only heap,
// the quickstart's Pulsar twin measured publish p99 7.5 vs 62 ms and
// p99.9 20 vs 230 ms (medians of 4 runs each, alternated), GC 80 vs 868 ms
// a minute, with less CPU (0.73 vs 0.81 cores): the small heap's tail was
// its collector's.
var PulsarJVM = []string{"-Xms2g", "-Xmx2g", "-XX:MaxDirectMemorySize=2g", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=10", "-XX:+ParallelRefProcEnabled"}

// PulsarTestJVM is a standalone's heap, collector and compiler for tests
// that check behaviour, not latency (PulsarOptions.JVM): C1 only, the
// serial collector, 1 GiB. On the project's 2-core machine a standalone
// with it was ready after 11 CPU-seconds against PulsarJVM's 21, and idled
// at 0.03 cores against 0.08 (two starts each, alternated), and CI starts a
// standalone about a dozen times, beside other JVMs. Benchmarks and the
// tests of what a run reports keep PulsarJVM.
var PulsarTestJVM = []string{"-Xms512m", "-Xmx1g", "-XX:MaxDirectMemorySize=1g", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"}

// pulsarJVMArgs are the module openings Pulsar 4 needs on Java 17 (the same
// list its bin/pulsar script passes).
var pulsarJVMArgs = []string{
	"-Djava.net.preferIPv4Stack=true", "-Djava.awt.headless=true",
	"--add-opens", "java.base/sun.net=ALL-UNNAMED",
	"--add-opens", "java.base/java.lang=ALL-UNNAMED",
	"--add-opens", "java.base/java.nio=ALL-UNNAMED",
	"--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED",
	"--add-opens", "java.base/java.io=ALL-UNNAMED",
	"--add-opens", "java.base/java.util.zip=ALL-UNNAMED",
	"--add-opens", "java.base/jdk.internal.platform=ALL-UNNAMED",
	"--add-opens", "java.management/sun.management=ALL-UNNAMED",
	"--add-opens", "jdk.management/com.sun.management.internal=ALL-UNNAMED",
	"-Dio.netty.tryReflectionSetAccessible=true",
	"-Dpulsar.allocator.exit_on_oom=true",
}

// log4j2 configuration: the jars carry none, and without one log4j prints
// errors only, which makes a failed start impossible to diagnose.
const pulsarLog4j = `<?xml version="1.0" encoding="UTF-8"?>
<Configuration status="warn">
  <Appenders>
    <Console name="console" target="SYSTEM_OUT">
      <PatternLayout pattern="%d{HH:mm:ss.SSS} %-5level [%t] %c{1.} - %msg%n"/>
    </Console>
  </Appenders>
  <Loggers>
    <Logger name="org.apache.zookeeper" level="warn"/>
    <Logger name="org.apache.bookkeeper.proto" level="warn"/>
    <Logger name="org.eclipse.jetty" level="warn"/>
    <Root level="info"><AppenderRef ref="console"/></Root>
  </Loggers>
</Configuration>
`

// pulsarConfig merges the base, the bookie and the broker settings and the
// keys StartPulsar owns into one properties text. A key set differently by
// the bookie and the broker maps is an error: the standalone reads one file
// for both, so only one value could win.
func pulsarConfig(owned, broker, bookie map[string]string) (string, error) {
	all, err := pulsarMerged(owned, broker, bookie)
	if err != nil {
		return "", err
	}
	return properties("# Written by streambench's localbrokers.StartPulsar.\n", all), nil
}

// pulsarMerged is pulsarConfig's settings as a map (a separate bookie's
// configuration starts from it).
func pulsarMerged(owned, broker, bookie map[string]string) (map[string]string, error) {
	for _, m := range []struct {
		name string
		kv   map[string]string
	}{{"BrokerConfig", broker}, {"BookieConfig", bookie}} {
		for k := range m.kv {
			if pulsarOwnedKeys[k] {
				return nil, fmt.Errorf("localbrokers: PulsarOptions.%s may not set %s: StartPulsar sets it so the endpoints and data directories are where it reports them", m.name, k)
			}
		}
	}
	for k, v := range bookie {
		if bv, ok := broker[k]; ok && bv != v {
			return nil, fmt.Errorf("localbrokers: %s is %q in BookieConfig but %q in BrokerConfig; the standalone reads one file for both, so set it once", k, v, bv)
		}
	}
	all := pulsarBaseConfig()
	for _, m := range []map[string]string{broker, bookie, owned} {
		for k, v := range m {
			all[k] = v
		}
	}
	return all, nil
}

// pulsarSettings are the standalone's settings beyond Pulsar's defaults,
// without the keys StartPulsar owns (ports, addresses, directories).
func pulsarSettings(broker, bookie map[string]string) map[string]string {
	all := pulsarBaseConfig()
	for _, m := range []map[string]string{broker, bookie} {
		for k, v := range m {
			all[k] = v
		}
	}
	for k := range all {
		if pulsarOwnedKeys[k] {
			delete(all, k)
		}
	}
	return all
}

// pulsarQuorumDefaults lowers the base's 3/3/2 default persistence (the
// broker's own topics, StartPulsar's readiness topic) to what fewer than 3
// bookies can hold, unless broker sets it: a 1-bookie standalone could
// otherwise create no topic and never be ready.
func pulsarQuorumDefaults(broker map[string]string, bookies int) map[string]string {
	if bookies >= 3 {
		return broker
	}
	out := map[string]string{
		"managedLedgerDefaultEnsembleSize": strconv.Itoa(bookies),
		"managedLedgerDefaultWriteQuorum":  strconv.Itoa(bookies),
		"managedLedgerDefaultAckQuorum":    strconv.Itoa(min(bookies, 2)),
	}
	for k, v := range broker {
		out[k] = v
	}
	return out
}

// StartPulsar starts Pulsar standalone with real BookKeeper: ZooKeeper,
// o.Bookies bookies and one broker in one JVM, on free loopback ports. It
// returns when the admin API answers and a topic can be created, or stops
// the JVM and returns an error with the log tail.
func StartPulsar(ctx context.Context, o PulsarOptions) (_ *Pulsar, err error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	if err := o.Security.check(o.BrokerConfig); err != nil {
		return nil, err
	}
	logf := o.Log
	p := &Pulsar{Version: o.Version, host: o.Host}
	if o.Security != nil {
		p.adminToken = strings.TrimSpace(o.Security.AdminToken)
	}
	if p.Dir, p.removeDir, err = clusterDir(o.Dir, "streambench-pulsar-"); err != nil {
		if p.removeDir {
			_ = os.RemoveAll(p.Dir)
		}
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = p.Stop()
		}
	}()

	logf("pulsar %s: fetching jars (first time only)", o.Version)
	lib, err := FetchJars(ctx, filepath.Join(CacheDir(), "pulsar-"+o.Version), pulsarArtifacts(o.Version)...)
	if err != nil {
		return nil, err
	}
	cp, err := Classpath(lib)
	if err != nil {
		return nil, err
	}

	if err := pulsarPorts(p, o.Bookies, o.BookieHTTP, o.Security.tls()); err != nil {
		return nil, err
	}
	owned := map[string]string{
		"brokerServicePort":      strconv.Itoa(p.BrokerPort),
		"webServicePort":         strconv.Itoa(p.WebPort),
		"httpServerEnabled":      strconv.FormatBool(o.BookieHTTP),
		"functionsWorkerEnabled": "false",
	}
	for k, v := range pulsarHostConfig(o.Host) {
		owned[k] = v
	}
	secured, err := pulsarSecurityConfig(o.Security, p.Dir, p.TLSBrokerPort, p.TLSWebPort)
	if err != nil {
		return nil, err
	}
	for k, v := range secured {
		owned[k] = v
	}
	if o.BookieHTTP && !o.BookieProcesses {
		owned["httpServerPort"] = strconv.Itoa(p.BookieHTTPPort)
		owned["httpServerHost"] = "127.0.0.1"
		// The bookie has no default HTTP implementation; vertx-http-server
		// comes with pulsar-broker's dependencies.
		owned["httpServerClass"] = "org.apache.bookkeeper.http.vertx.VertxHttpServer"
	}
	broker := pulsarQuorumDefaults(o.BrokerConfig, o.Bookies)
	merged, err := pulsarMerged(owned, broker, o.BookieConfig)
	if err != nil {
		return nil, err
	}
	conf := properties("# Written by streambench's localbrokers.StartPulsar.\n", merged)
	data := filepath.Join(p.Dir, "data")
	// A fresh standalone every start: old ledgers and metadata would make
	// a run depend on the previous one.
	if err := os.RemoveAll(data); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, err
	}
	confPath := filepath.Join(p.Dir, "standalone.conf")
	// 0600: with Security, it names the admin token's file and the keys.
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		return nil, err
	}
	jvm := PulsarJVM
	if o.JVM != nil {
		jvm = o.JVM
	}
	p.Setup = Setup{JVM: append([]string(nil), jvm...), Config: pulsarSettings(broker, o.BookieConfig)}
	p.Setup.readJava(ctx, logf)
	logConf := filepath.Join(p.Dir, "log4j2.xml")
	if err := os.WriteFile(logConf, []byte(pulsarLog4j), 0o644); err != nil {
		return nil, err
	}

	inside := o.Bookies
	if o.BookieProcesses {
		inside = 0
	}
	j := JVM{
		Name:      "pulsar-standalone",
		Classpath: cp,
		Main:      "org.apache.pulsar.PulsarStandaloneStarter",
		JVMArgs:   append(append(append([]string{}, jvm...), pulsarJVMArgs...), "-Dlog4j.configurationFile="+logConf),
		GCLog:     filepath.Join(p.Dir, "gc.log"),
		Args: []string{
			"--config", confPath,
			"--no-functions-worker", "--no-stream-storage",
			"--num-bookies", strconv.Itoa(inside),
			"--zookeeper-port", strconv.Itoa(p.ZooKeeperPort),
			"--zookeeper-dir", filepath.Join(data, "zookeeper"),
			"--bookkeeper-port", strconv.Itoa(p.BookiePorts[0]),
			"--bookkeeper-dir", filepath.Join(data, "bookkeeper"),
			"--wipe-data",
		},
		// ZooKeeper metadata. Without it (a fresh data directory) 4.0's
		// standalone uses RocksDB metadata and BKCluster, which forces the
		// broker's bookkeeperNumberOfChannelsPerBookie to 1 (silently
		// undoing the source studies' (docs/methodology.md) 64) and starts from a bookie base
		// configuration with journalWriteData=false. In ZooKeeper mode
		// (LocalBookkeeperEnsemble) each bookie gets this file's settings
		// with only its port, id and directories changed, and the broker
		// keeps its settings as written.
		Env: append([]string{"PULSAR_STANDALONE_USE_ZOOKEEPER=1"}, o.Env...),
		Dir: p.Dir,
	}
	logf("pulsar %s: starting standalone with %d bookies (broker %d, admin %d, log %s)", o.Version, o.Bookies, p.BrokerPort, p.WebPort, filepath.Join(p.Dir, j.Name+".log"))
	start := StartJVM
	if o.Detached {
		start = StartJVMDetached
	}
	if p.Process, err = start(j); err != nil {
		return nil, err
	}
	p.detached = o.Detached
	var afterAdmin func(ctx context.Context, left time.Duration) error
	if o.BookieProcesses {
		bookieJVM := append(append(append([]string{}, PulsarBookieJVM...), pulsarJVMArgs...), "-Dlog4j.configurationFile="+logConf)
		afterAdmin = func(ctx context.Context, left time.Duration) error {
			return p.startBookies(ctx, merged, cp, bookieJVM, o.Detached, left, logf)
		}
	}
	if err := p.waitReady(ctx, o.ReadyTimeout, afterAdmin); err != nil {
		return nil, err
	}
	logf("pulsar %s: ready at %s (admin %s)", o.Version, p.ServiceURL(), p.AdminURL())
	return p, nil
}

func pulsarArtifacts(version string) []Artifact {
	return []Artifact{
		Artifact("org.apache.pulsar:pulsar-broker:" + version),
		// The jars carry no logging backend of their own.
		Artifact("org.apache.logging.log4j:log4j-core:" + pulsarLog4jVersion),
		Artifact("org.apache.logging.log4j:log4j-slf4j2-impl:" + pulsarLog4jVersion),
	}
}

// pulsarLog4jVersion is the log4j that Pulsar 4.0.7 builds with.
const pulsarLog4jVersion = "2.23.1"

// pulsarPorts picks free loopback ports. The bookies take consecutive ports
// from --bookkeeper-port (the standalone counts up from it), so a block of
// free consecutive ports is searched for.
func pulsarPorts(p *Pulsar, bookies int, http, tls bool) error {
	n := 3
	if tls {
		n = 5
	}
	ports, err := FreePorts(n)
	if err != nil {
		return err
	}
	p.BrokerPort, p.WebPort, p.ZooKeeperPort = ports[0], ports[1], ports[2]
	if tls {
		p.TLSBrokerPort, p.TLSWebPort = ports[3], ports[4]
	}
	if p.BookiePorts, err = consecutiveFreePorts(bookies); err != nil {
		return err
	}
	if http {
		if p.BookieHTTPPort, err = FreePort(); err != nil {
			return err
		}
	}
	return nil
}

// ServiceURL is the binary protocol endpoint (pulsar://127.0.0.1:port, or
// the Host given).
func (p *Pulsar) ServiceURL() string {
	return fmt.Sprintf("pulsar://%s:%d", p.hostname(), p.BrokerPort)
}

// AdminURL is the admin REST endpoint (http://127.0.0.1:port, or the Host
// given).
func (p *Pulsar) AdminURL() string { return fmt.Sprintf("http://%s:%d", p.hostname(), p.WebPort) }

// Pids are the processes to stop: the standalone's JVM and any separate
// bookies' (their pids now, a restarted bookie's new one).
func (p *Pulsar) Pids() []int {
	if p.Process == nil {
		return nil
	}
	pids := []int{p.Process.Pid}
	p.procMu.Lock()
	defer p.procMu.Unlock()
	for _, b := range p.bookies {
		pids = append(pids, b.process.Pid)
	}
	return pids
}

// LogFile is the standalone's log.
func (p *Pulsar) LogFile() string {
	if p.Process == nil {
		return ""
	}
	return p.Process.LogFile
}

// waitReady waits until the admin API lists the cluster and a topic can be
// created in public/default, which needs the broker, ZooKeeper and enough
// bookies for the default persistence (3/3/2) to work. afterAdmin, if set,
// runs once the admin API answers (separate bookies start then), with the
// time left.
func (p *Pulsar) waitReady(ctx context.Context, timeout time.Duration, afterAdmin func(context.Context, time.Duration) error) error {
	deadline := time.Now().Add(timeout)
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	client := &http.Client{Timeout: 10 * time.Second}
	topic := p.AdminURL() + "/admin/v2/persistent/public/default/streambench-ready"
	var last string
	step := "admin API"
	for {
		if p.Process.Exited() {
			return fmt.Errorf("pulsar standalone exited before it was ready (%v); log %s:\n%s", p.Process.waitErr, p.Process.LogFile, p.Process.LogTail(4000))
		}
		if step == "admin API" {
			code, body, err := p.adminDo(ctx, client, http.MethodGet, p.AdminURL()+"/admin/v2/clusters")
			switch {
			case err != nil:
				last = err.Error()
			case code == http.StatusOK && strings.Contains(body, "standalone"):
				step = "topic creation"
				if afterAdmin != nil {
					if err := afterAdmin(ctx, time.Until(deadline)); err != nil {
						return fmt.Errorf("pulsar standalone: starting its bookies: %w", err)
					}
				}
			default:
				last = fmt.Sprintf("GET /admin/v2/clusters: %d %s", code, body)
			}
		}
		if step == "topic creation" {
			code, body, err := p.adminDo(ctx, client, http.MethodPut, topic)
			switch {
			case err != nil:
				last = err.Error()
			case code == http.StatusNoContent || code == http.StatusOK || code == http.StatusConflict:
				// The topic forces a ledger onto the bookies: produce
				// a real write path check, then clean up.
				_, _, _ = p.adminDo(ctx, client, http.MethodDelete, topic+"?force=true")
				return nil
			default:
				last = fmt.Sprintf("PUT %s: %d %s", topic, code, body)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pulsar standalone not ready within %s (waiting for %s; last: %s); log %s:\n%s", timeout, step, last, p.Process.LogFile, p.Process.LogTail(4000))
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// adminDo sends one admin request, with the admin token when Security
// turned tokens on.
func (p *Pulsar) adminDo(ctx context.Context, c *http.Client, method, url string) (int, string, error) {
	return p.adminRequest(ctx, c, method, url, 4096)
}

// adminGet reads one admin answer of up to 1 MiB (a topic's internal
// stats), with the admin token when Security turned tokens on.
func (p *Pulsar) adminGet(ctx context.Context, c *http.Client, url string) (int, string, error) {
	return p.adminRequest(ctx, c, http.MethodGet, url, 1<<20)
}

func (p *Pulsar) adminRequest(ctx context.Context, c *http.Client, method, url string, limit int64) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return 0, "", err
	}
	p.authorize(req)
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, limit))
	return resp.StatusCode, strings.TrimSpace(string(b)), nil
}

// Stop stops the JVM by its pid (SIGTERM, then SIGKILL after StopGrace) and
// removes a temporary Dir. It is idempotent.
func (p *Pulsar) Stop() error {
	return p.stopped.do(func() error {
		var errs []error
		if p.Process != nil {
			errs = append(errs, p.Process.Stop(StopGrace))
		}
		errs = append(errs, p.stopBookies())
		if p.removeDir {
			errs = append(errs, os.RemoveAll(p.Dir))
		}
		return errors.Join(errs...)
	})
}
