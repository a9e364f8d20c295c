package localbrokers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// PulsarBookieJVM is a separate bookie's heap, collector and compiler
// (PulsarOptions.BookieProcesses). A bookie's heap holds little: its write
// and read-ahead caches (16 MiB each in pulsarBaseConfig) and netty's
// buffers are direct memory. Four of them beside the standalone fit the
// project's 2-core, 24 GiB machine; the small collector and C1 keep their
// idle CPU low, as PulsarTestJVM does for the standalone.
var PulsarBookieJVM = []string{"-Xms64m", "-Xmx256m", "-XX:MaxDirectMemorySize=256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"}

// bookieMain is BookKeeper's own server entry point (bin/bookkeeper bookie),
// in bookkeeper-server, which pulsar-broker depends on.
const bookieMain = "org.apache.bookkeeper.server.Main"

// pulsarBookie is one bookie run as its own JVM.
type pulsarBookie struct {
	index int
	port  int
	jvm   JVM
	// process is guarded by Pulsar.procMu: a restart replaces it.
	process *Process
}

// bookieConfig is bookie index's configuration: the standalone's merged
// settings (which hold every bookie key the standalone's own bookies would
// get) with the bookie's port, directories and metadata service, as
// LocalBookkeeperEnsemble sets them for its in-process bookies. Only the
// first bookie serves HTTP when asked (BookieHTTP), on its own port. Pure.
func bookieConfig(merged map[string]string, index, port, zkPort int, data string, httpPort int) map[string]string {
	c := make(map[string]string, len(merged)+8)
	for k, v := range merged {
		c[k] = v
	}
	dir := filepath.Join(data, "bookie-"+strconv.Itoa(index))
	c["bookiePort"] = strconv.Itoa(port)
	c["journalDirectory"] = filepath.Join(dir, "journal")
	c["ledgerDirectories"] = filepath.Join(dir, "ledgers")
	c["metadataServiceUri"] = fmt.Sprintf("zk+null://127.0.0.1:%d/ledgers", zkPort)
	c["httpServerEnabled"] = strconv.FormatBool(index == 0 && httpPort != 0)
	if index == 0 && httpPort != 0 {
		c["httpServerPort"] = strconv.Itoa(httpPort)
	}
	// The bookie's stats provider would otherwise open Prometheus's port
	// 8000 in every bookie, and the second would fail to start.
	c["enableStatistics"] = "false"
	return c
}

// startBookies starts the separate bookies and returns once each has opened
// its port (a bookie registers itself before it listens). It runs after
// the standalone's ZooKeeper holds BookKeeper's layout (the admin API
// answering says so: the broker starts after it).
func (p *Pulsar) startBookies(ctx context.Context, merged map[string]string, cp string, jvmArgs []string, detached bool, timeout time.Duration, logf func(string, ...any)) error {
	data := filepath.Join(p.Dir, "data")
	for i, port := range p.BookiePorts {
		conf := filepath.Join(p.Dir, fmt.Sprintf("bookie-%d.conf", i))
		c := bookieConfig(merged, i, port, p.ZooKeeperPort, data, p.BookieHTTPPort)
		if err := os.WriteFile(conf, []byte(properties("# Written by streambench's localbrokers.StartPulsar: a separate bookie.\n", c)), 0o600); err != nil {
			return err
		}
		b := &pulsarBookie{index: i, port: port, jvm: JVM{
			Name:      "bookie-" + strconv.Itoa(i),
			Classpath: cp,
			Main:      bookieMain,
			JVMArgs:   jvmArgs,
			GCLog:     filepath.Join(p.Dir, fmt.Sprintf("gc-bookie-%d.log", i)),
			Args:      []string{"--conf", conf},
			Dir:       p.Dir,
		}}
		start := StartJVM
		if detached {
			start = StartJVMDetached
		}
		proc, err := start(b.jvm)
		if err != nil {
			return err
		}
		b.process = proc
		p.procMu.Lock()
		p.bookies = append(p.bookies, b)
		p.procMu.Unlock()
	}
	deadline := time.Now().Add(timeout)
	for _, b := range p.bookies {
		if err := b.process.WaitPort(ctx, "127.0.0.1:"+strconv.Itoa(b.port), time.Until(deadline)); err != nil {
			return fmt.Errorf("bookie-%d did not listen on %d: %w; log %s:\n%s", b.index, b.port, err, b.process.LogFile, b.process.LogTail(3000))
		}
	}
	logf("pulsar: %d bookies running as their own JVMs (ports %v)", len(p.bookies), p.BookiePorts)
	return nil
}

// BookieProcess is bookie index's process now (a restarted bookie's new
// one); nil when the bookies run inside the standalone or there is no such
// bookie.
func (p *Pulsar) BookieProcess(index int) *Process {
	p.procMu.Lock()
	defer p.procMu.Unlock()
	if index < 0 || index >= len(p.bookies) {
		return nil
	}
	return p.bookies[index].process
}

// SeparateBookies is the number of bookies run as their own JVMs
// (PulsarOptions.BookieProcesses); 0 when they run inside the standalone.
func (p *Pulsar) SeparateBookies() int {
	p.procMu.Lock()
	defer p.procMu.Unlock()
	return len(p.bookies)
}

// BookieID is bookie index's id in BookKeeper's metadata (its advertised
// address and port), as a ledger's ensembles name it.
func (p *Pulsar) BookieID(index int) string {
	return "127.0.0.1:" + strconv.Itoa(p.BookiePorts[index])
}

// RestartBookie starts a killed bookie again on its own data and port, as
// the kubelet restarts a killed container: after its process has exited,
// and back once it listens. Its registration waits for the killed bookie's
// ZooKeeper session to expire (the bookie's zkTimeout), as a restarted pod's
// does; that is part of its return. Not safe beside Stop or another restart
// of the same bookie.
func (p *Pulsar) RestartBookie(ctx context.Context, index int, timeout time.Duration) (*Process, error) {
	p.procMu.Lock()
	if index < 0 || index >= len(p.bookies) {
		p.procMu.Unlock()
		return nil, fmt.Errorf("localbrokers: pulsar has no separate bookie-%d to restart", index)
	}
	b := p.bookies[index]
	old := b.process
	p.procMu.Unlock()
	select {
	case <-old.done:
	case <-time.After(restartExitWait):
		return nil, fmt.Errorf("localbrokers: %s (pid %d) is still running %s after it was to have died; not restarting it", old.Name, old.Pid, restartExitWait)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	start := StartJVM
	if p.detached {
		start = StartJVMDetached
	}
	np, err := start(b.jvm)
	if err != nil {
		return nil, fmt.Errorf("localbrokers: restarting %s: %w", old.Name, err)
	}
	p.procMu.Lock()
	b.process = np
	p.procMu.Unlock()
	return np, np.WaitPort(ctx, "127.0.0.1:"+strconv.Itoa(b.port), timeout)
}

// stopBookies stops the separate bookies together.
func (p *Pulsar) stopBookies() error {
	p.procMu.Lock()
	procs := make([]*Process, 0, len(p.bookies))
	for _, b := range p.bookies {
		procs = append(procs, b.process)
	}
	p.procMu.Unlock()
	errs := make([]error, len(procs))
	var wg sync.WaitGroup
	for i, proc := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = proc.Stop(StopGrace)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Ensemble is the bookies a topic's newest ledger writes to now.
type Ensemble struct {
	Topic  string
	Ledger int64
	// Bookies are the ledger's last ensemble, by bookie id
	// (127.0.0.1:port), in BookKeeper's order.
	Bookies []string
}

// CurrentEnsemble asks the broker which bookies the newest ledger of topic
// (a persistent topic's path: tenant/namespace/name) writes to: its
// internal stats with the ledgers' metadata, whose ensembles list each
// ensemble change by the entry it starts at.
func (p *Pulsar) CurrentEnsemble(ctx context.Context, topic string) (Ensemble, error) {
	c := &http.Client{Timeout: 10 * time.Second}
	code, body, err := p.adminGet(ctx, c, p.AdminURL()+"/admin/v2/persistent/"+topic+"/internalStats?metadata=true")
	if err != nil {
		return Ensemble{}, err
	}
	if code != http.StatusOK {
		return Ensemble{}, fmt.Errorf("internal stats of %s: %d %s", topic, code, body)
	}
	return parseEnsemble(topic, []byte(body))
}

// parseEnsemble reads the newest ledger's last ensemble from a topic's
// internal stats. BookKeeper's metadata text names them as
// "ensembles={0=[a, b, c], 812=[a, b, d]}". Pure.
func parseEnsemble(topic string, stats []byte) (Ensemble, error) {
	var s struct {
		Ledgers []struct {
			LedgerID int64  `json:"ledgerId"`
			Metadata string `json:"metadata"`
		} `json:"ledgers"`
	}
	if err := json.Unmarshal(stats, &s); err != nil {
		return Ensemble{}, fmt.Errorf("internal stats of %s: %w", topic, err)
	}
	if len(s.Ledgers) == 0 {
		return Ensemble{}, fmt.Errorf("%s has no ledger yet", topic)
	}
	l := s.Ledgers[len(s.Ledgers)-1]
	es, err := LedgerEnsembles(l.Metadata)
	if err != nil {
		return Ensemble{}, fmt.Errorf("ledger %d of %s: %w", l.LedgerID, topic, err)
	}
	return Ensemble{Topic: topic, Ledger: l.LedgerID, Bookies: es[len(es)-1]}, nil
}

// LedgerEnsembles reads the "ensembles={first entry=[bookie, …], …}" part of a
// ledger's metadata, as BookKeeper prints it: each ensemble's bookies, in
// the order of the entries they start at.
func LedgerEnsembles(metadata string) ([][]string, error) {
	_, rest, ok := strings.Cut(metadata, "ensembles={")
	if !ok {
		return nil, fmt.Errorf("no ensembles in the ledger's metadata %q (was it read with metadata=true?)", metadata)
	}
	end := strings.Index(rest, "}")
	if end < 0 {
		return nil, fmt.Errorf("the ensembles in the ledger's metadata %q do not end", metadata)
	}
	var out [][]string
	for _, part := range strings.Split(rest[:end], "]")[:strings.Count(rest[:end], "]")] {
		_, list, ok := strings.Cut(part, "=[")
		if !ok {
			return nil, fmt.Errorf("cannot read the ensemble %q in the ledger's metadata %q", part, metadata)
		}
		var bookies []string
		for _, b := range strings.Split(list, ",") {
			bookies = append(bookies, strings.TrimSpace(b))
		}
		out = append(out, bookies)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no ensemble in the ledger's metadata %q", metadata)
	}
	return out, nil
}
