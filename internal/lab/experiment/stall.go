package experiment

// The replica-stall experiment: how many replicas a write's acknowledgement
// waits for, settled on real brokers instead of taken from the durability
// study's table, which calls Kafka's acks=all with min.insync.replicas=2 and
// Pulsar's ack quorum 2 of 3 both "2 acks".
//
// Three Kafka nodes run a topic of one partition on all three; while one
// producer writes at a fixed rate, the process of one follower (not the
// leader) is stopped with SIGSTOP for a few seconds and continued with
// SIGCONT: to the leader that is a replica that stopped fetching, as a long
// GC pause or a hung disk would make it. A write that waits for every
// in-sync replica cannot be acknowledged before the follower runs again; a
// write that waits for fewer can. The verdict is read from the messages
// sent in the first half of the stall: whether they were acknowledged only
// after it ended (each then waited at least half the stall), against how
// many messages before the stall took that long anyway (a busy machine
// stretches latencies; it does not hold acks until a stopped process
// continues). The brokers' own view is read beside it: the partition's ISR
// before, during and after the stall.
//
// A second stall, longer than replica.lag.time.max.ms, shows how long the
// leader waits for a stopped in-sync follower before it drops it from the
// ISR and acknowledges with the rest (at least min.insync.replicas).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/coordinator"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/localbrokers"
	"github.com/streambench/streambench-operator/internal/stats"
	"github.com/streambench/streambench-operator/internal/syncdelay"
)

// StallCell is one stall at one level.
type StallCell struct {
	System v1alpha1.System
	Level  v1alpha1.Level
	// AckAll runs Pulsar with the ack quorum equal to the write quorum (3
	// of 3): what Kafka's acks=all waits for while every replica is in
	// sync.
	AckAll bool
	// Stall is how long the replica is stopped.
	Stall time.Duration
	// PastLag marks a cell whose stall outlasts the bound after which
	// the system stops waiting for the stalled replica: Kafka's
	// replica.lag.time.max.ms, Pulsar's add timeout.
	PastLag bool
}

// Name is e.g. "kafka-L2-stall4s", "kafka-L2-stall16s-pastlag" or
// "pulsar-L2-aq3-stall4s".
func (c StallCell) Name() string {
	n := fmt.Sprintf("%s-L%d", c.System, c.Level)
	if c.AckAll {
		n += "-aq3"
	}
	n += "-stall" + c.Stall.Round(time.Second).String()
	if c.PastLag {
		n += "-pastlag"
	}
	return n
}

// Spec is the cell's durability: its level, or for AckAll the level's
// modes with three replicas, all three to acknowledge.
func (c StallCell) Spec() v1alpha1.DurabilitySpec {
	l := c.Level
	if !c.AckAll {
		return v1alpha1.DurabilitySpec{Level: &l}
	}
	r, loc, _ := durability.ModesOf(l)
	return v1alpha1.DurabilitySpec{
		Replication: &v1alpha1.ReplicationDurability{Mode: r, Replicas: 3, AckReplicas: 3},
		Local:       &v1alpha1.LocalDurability{Mode: loc, Journal: v1alpha1.JournalWrite},
	}
}

// StallOptions configure RunStalls.
type StallOptions struct {
	// Stall is the short stall of every level (default 4 s): a third of
	// LagMax, so the leader still counts the follower in sync even when a
	// busy machine had it fetching seconds late before the stall.
	Stall time.Duration
	// LagMax is the brokers' replica.lag.time.max.ms (default 12 s, under
	// half of Kafka's 30 s default, so the past-lag cell stays short);
	// the past-lag cell stalls twice LagMax: the leader checks for lagging
	// replicas every LagMax/2, so it drops a stopped one between LagMax
	// and 1.5 LagMax after its last fetch. The brokers' KRaft
	// broker.session.timeout.ms is raised above the past-lag stall: a
	// stopped broker also stops heartbeating, and with the default 9 s the
	// controller fenced it (dropping it from the ISR) 8.5 s into a 24 s
	// stall, before a 12 s lag bound; that is a second bound, not this one.
	LagMax time.Duration
	// AddTimeout is the Pulsar broker's bookkeeperClientTimeoutInSeconds
	// (default 8 s; Pulsar's is 30 s): a bookie that has not answered an
	// add for that long is replaced in the ledger's ensemble by a spare
	// bookie (the standalones run a fourth). The past-timeout cell stalls
	// twice AddTimeout: BookKeeper checks for timed-out adds every half
	// timeout, so it replaces a stalled bookie between AddTimeout and 1.5
	// AddTimeout into the stall.
	AddTimeout time.Duration
	// Rate in messages per second of the one producer (default 200) and
	// MessageSize in bytes (default 1024).
	Rate        int64
	MessageSize int32
	// PulsarJVM are the standalones' heap, collector and compiler options
	// (nil: localbrokers.PulsarJVM); the verdicts count which acks a stall
	// held, not how fast the others came (see Options.PulsarJVM).
	PulsarJVM []string
	// Warmup before the measured phase (default 5 s), and Before: how long
	// into the measured phase the stall begins (default 3 s).
	Warmup, Before time.Duration
	// Version of Kafka ("": localbrokers.DefaultKafkaVersion).
	Version string
	// Dir holds the brokers' data (default: a new temporary directory).
	Dir string
	// Log receives progress lines (default: none).
	Log func(format string, args ...any)
}

func (o *StallOptions) defaults() {
	if o.Stall == 0 {
		o.Stall = 4 * time.Second
	}
	if o.LagMax == 0 {
		o.LagMax = 12 * time.Second
	}
	if o.Rate == 0 {
		o.Rate = 200
	}
	if o.MessageSize == 0 {
		o.MessageSize = 1024
	}
	if o.AddTimeout == 0 {
		o.AddTimeout = 8 * time.Second
	}
	if o.Warmup == 0 {
		o.Warmup = 5 * time.Second
	}
	if o.Before == 0 {
		o.Before = 3 * time.Second
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
}

// StallCells are Kafka at every level with the short stall, and at level
// 2 with a stall past LagMax; and Pulsar at the replicated levels 1 (the
// bookies sync their journal before they answer) and 2 (they write it and
// answer), at level 2 also with the ack quorum raised to 3 (the matched
// twin of Kafka's level 2), with the short stall and with one past the add
// timeout, and at level 3 (ack quorum 1). A Pulsar stall
// holds one bookie's journal writes and syncs: the bookies of the local
// standalone share one JVM, so no signal can stop one alone.
func (o StallOptions) StallCells() []StallCell {
	o.defaults()
	var cs []StallCell
	for l := v1alpha1.Level1; l <= v1alpha1.Level4; l++ {
		cs = append(cs, StallCell{System: v1alpha1.SystemKafka, Level: l, Stall: o.Stall})
	}
	return append(cs,
		StallCell{System: v1alpha1.SystemKafka, Level: v1alpha1.Level2, Stall: 2 * o.LagMax, PastLag: true},
		StallCell{System: v1alpha1.SystemPulsar, Level: v1alpha1.Level1, Stall: o.Stall},
		StallCell{System: v1alpha1.SystemPulsar, Level: v1alpha1.Level3, Stall: o.Stall},
		StallCell{System: v1alpha1.SystemPulsar, Level: v1alpha1.Level2, Stall: o.Stall},
		StallCell{System: v1alpha1.SystemPulsar, Level: v1alpha1.Level2, AckAll: true, Stall: o.Stall},
		StallCell{System: v1alpha1.SystemPulsar, Level: v1alpha1.Level2, AckAll: true, Stall: 2 * o.AddTimeout, PastLag: true})
}

// Latency is the publish latency of a set of messages.
type Latency struct {
	Count         int
	P50, P99, Max time.Duration
}

func latencyOf(acks []ack) Latency {
	if len(acks) == 0 {
		return Latency{}
	}
	ds := make([]time.Duration, len(acks))
	for i, a := range acks {
		ds[i] = a.acked.Sub(a.send)
	}
	slices.Sort(ds)
	at := func(q float64) time.Duration { return ds[min(len(ds)-1, int(q*float64(len(ds))))] }
	return Latency{Count: len(ds), P50: at(0.5), P99: at(0.99), Max: ds[len(ds)-1]}
}

func (l Latency) String() string {
	if l.Count == 0 {
		return "no acks"
	}
	return fmt.Sprintf("p50 %s, p99 %s, max %s (%d acks)", ms(l.P50), ms(l.P99), ms(l.Max), l.Count)
}

// StallResult is what one stall measured.
type StallResult struct {
	Cell     StallCell
	Version  string
	Settings string
	// Leader and Follower are the partition's leader and the stopped
	// follower (node ids); From and To the stall on the wall clock.
	Leader, Follower int32
	From, To         time.Time
	// ISR before the stall, during it (read Stall-1 s after it began), and
	// after it (once the follower caught up, or 10 s after the stall).
	ISRBefore, ISRDuring, ISRAfter []int32
	// Ensembles, for Pulsar, is the number of ensembles of each of the
	// topic's ledgers before the stall, during it (Stall-1 s after it
	// began) and a second after it: a ledger whose count grew replaced a
	// bookie (ensembles.go). Follower is then the stalled bookie's index.
	EnsemblesBefore, EnsemblesDuring, EnsemblesAfter []int
	// Outside is the latency of the messages sent before the stall in the
	// measured phase; During of those sent during it.
	Outside, During Latency
	// Early is the messages sent in the stall's first half and
	// acknowledged; Held is how many of them were acknowledged only after
	// the follower continued (or after the ISR dropped it).
	Early, Held int
	// Chance is the share of the messages before the stall whose latency
	// was at least half the stall: how many of Early a busy machine alone
	// would hold that long.
	Chance float64
	// Resumed is the time from the stall's start to the first
	// acknowledgement of a message sent during it.
	Resumed time.Duration
	// Unacked counts messages sent during the stall without an ack (or
	// with an error) by the end of the run.
	Unacked int
	// LagMax is the bound after which the system stops waiting: Kafka's
	// replica.lag.time.max.ms, Pulsar's add timeout.
	LagMax time.Duration
}

// BrokersView is what the brokers did about the stalled replica: Kafka's
// ISR, Pulsar's ensembles, before / during / after the stall.
func (r StallResult) BrokersView() string {
	if r.Cell.System == v1alpha1.SystemPulsar {
		return fmt.Sprintf("bookie %d's journal; ensembles per ledger %v / %v / %v", r.Follower, r.EnsemblesBefore, r.EnsemblesDuring, r.EnsemblesAfter)
	}
	return fmt.Sprintf("follower %d of leader %d; ISR %v / %v / %v", r.Follower, r.Leader, r.ISRBefore, r.ISRDuring, r.ISRAfter)
}

// DroppedAfter is, for a stall past LagMax, how long the system waited
// for the stalled replica: the time to the first acknowledgement of a
// message sent during the stall, if that came before the stall ended and
// the brokers had dropped the replica by the read during the stall (Kafka:
// the ISR no longer held the follower; Pulsar: the topic's newest ledger
// had a new ensemble); ok false otherwise.
func (r StallResult) DroppedAfter() (time.Duration, bool) {
	if r.Resumed <= 0 || !r.From.Add(r.Resumed).Before(r.To) {
		return 0, false
	}
	if r.Cell.System == v1alpha1.SystemPulsar {
		// Pulsar: the newest ledger read during the stall has more
		// ensembles than it had before (or is a new ledger).
		b, d := r.EnsemblesBefore, r.EnsemblesDuring
		if len(b) == 0 || len(d) == 0 || len(d) == len(b) && d[len(d)-1] <= b[len(b)-1] {
			return 0, false
		}
		return r.Resumed, true
	}
	if r.ISRDuring == nil || slices.Contains(r.ISRDuring, r.Follower) {
		return 0, false
	}
	return r.Resumed, true
}

// Reading is what the acks did, in words, for the table.
func (r StallResult) Reading() string {
	if r.Cell.PastLag {
		d, ok := r.DroppedAfter()
		switch {
		case ok && r.Cell.System == v1alpha1.SystemPulsar:
			return fmt.Sprintf("held until the broker replaced the stalled bookie in the ensemble, %.1f s into the stall (bookkeeperClientTimeoutInSeconds %.0f)", d.Seconds(), r.LagMax.Seconds())
		case ok:
			return fmt.Sprintf("held until the leader dropped the stopped follower from the ISR, %.1f s into the stall (replica.lag.time.max.ms %d)", d.Seconds(), r.LagMax.Milliseconds())
		case r.Cell.System == v1alpha1.SystemPulsar:
			return "the stalled bookie was not replaced during the stall"
		}
		return "the follower was not dropped from the ISR during the stall"
	}
	v, err := r.Verdict()
	if err != nil {
		return "cannot tell"
	}
	return v.String()
}

// Waits says what the acknowledgements waited for, from the held share and
// coincidence; err when the machine was too slow to tell.
type Waits int

// The answers a stall gives.
const (
	WaitsUnknown Waits = iota
	// WaitsForStalled: the writes were held until the stopped replica
	// ran again (or was dropped from the ISR).
	WaitsForStalled
	// WaitsNotForStalled: the writes were acknowledged without it.
	WaitsNotForStalled
)

func (w Waits) String() string {
	switch w {
	case WaitsForStalled:
		return "waited for the stalled replica"
	case WaitsNotForStalled:
		return "did not wait for the stalled replica"
	}
	return "cannot tell"
}

// Verdict reads the stall: held ≥ syncedShare of the early messages is a
// wait; at most asyncShare, or chanceFactor times Chance, is none; a
// machine so slow that tooSlowToTell of the messages before the stall
// took half the stall cannot tell.
func (r StallResult) Verdict() (Waits, error) {
	if r.Early == 0 {
		return WaitsUnknown, fmt.Errorf("%s: no message sent in the first half of the stall was acknowledged", r.Cell.Name())
	}
	if r.Chance >= tooSlowToTell {
		return WaitsUnknown, fmt.Errorf("%s: %.0f %% of the messages before the stall took half the stall (%s) anyway: the machine is too slow to tell a held ack from a slow one",
			r.Cell.Name(), 100*r.Chance, r.Cell.Stall/2)
	}
	held := float64(r.Held) / float64(r.Early)
	switch {
	case held >= syncedShare:
		return WaitsForStalled, nil
	case held <= max(asyncShare, chanceFactor*r.Chance):
		return WaitsNotForStalled, nil
	}
	return WaitsUnknown, fmt.Errorf("%s: %d of %d messages sent early in the stall were held until it ended, against %.0f %% by chance: neither all nor none",
		r.Cell.Name(), r.Held, r.Early, 100*r.Chance)
}

// readStall counts, of acks, what StallResult reports about the stall
// [from, to] that began Before into the measured phase starting at
// measureFrom. sent counts every message sent during the stall, acked or
// not.
func readStall(acks []ack, sent int, measureFrom, from, to time.Time) StallResult {
	var r StallResult
	half := to.Sub(from) / 2
	var outside, during []ack
	slow := 0
	for _, a := range acks {
		switch {
		case !a.send.Before(measureFrom) && a.send.Before(from):
			outside = append(outside, a)
			if a.acked.Sub(a.send) >= half {
				slow++
			}
		case !a.send.Before(from) && a.send.Before(to):
			during = append(during, a)
			if d := a.acked.Sub(from); r.Resumed == 0 || d < r.Resumed {
				r.Resumed = d
			}
			if a.send.Before(from.Add(half)) {
				r.Early++
				if !a.acked.Before(to) {
					r.Held++
				}
			}
		}
	}
	r.Outside, r.During = latencyOf(outside), latencyOf(during)
	if len(outside) > 0 {
		r.Chance = float64(slow) / float64(len(outside))
	}
	r.From, r.To = from, to
	r.Unacked = max(0, sent-len(during))
	return r
}

// RunStalls runs every cell of StallCells: Kafka's on three nodes, then
// Pulsar's on standalones with three bookies (one per bookie
// configuration), each on a topic of its own, one after another.
func RunStalls(ctx context.Context, o StallOptions) (_ []StallResult, err error) {
	o.defaults()
	dir := o.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "streambench-stall-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	workerCtx, stopWorkers := context.WithCancel(context.Background())
	rec := &recorder{}
	url, workerDone, err := startWorker(workerCtx, rec.drivers())
	if err != nil {
		stopWorkers()
		return nil, err
	}
	defer func() { stopWorkers(); <-workerDone }()

	var kafka, pulsar []StallCell
	for _, c := range o.StallCells() {
		if c.System == v1alpha1.SystemKafka {
			kafka = append(kafka, c)
		} else {
			pulsar = append(pulsar, c)
		}
	}
	out, err := runKafkaStalls(ctx, o, kafka, filepath.Join(dir, "kafka"), url, rec)
	if err != nil {
		return out, err
	}
	ps, err := runPulsarStalls(ctx, o, pulsar, dir, url, rec)
	return append(out, ps...), err
}

func runKafkaStalls(ctx context.Context, o StallOptions, cells []StallCell, dir, workerURL string, rec *recorder) (_ []StallResult, err error) {
	base, err := durability.Translate(v1alpha1.SystemKafka, v1alpha1.DurabilitySpec{Level: ptr.To(v1alpha1.Level2)})
	if err != nil {
		return nil, err
	}
	broker := map[string]string{
		"replica.lag.time.max.ms": strconv.FormatInt(o.LagMax.Milliseconds(), 10),
		// Above the past-lag stall (2 LagMax), so the controller does not
		// fence the stopped broker first (see StallOptions.LagMax).
		"broker.session.timeout.ms": strconv.FormatInt((3 * o.LagMax).Milliseconds(), 10),
	}
	for k, v := range base.Kafka.Broker {
		broker[k] = v
	}
	start := time.Now()
	k, err := localbrokers.StartKafka(ctx, localbrokers.KafkaOptions{BrokerConfig: broker, Version: o.Version, Dir: dir, Log: o.Log})
	if err != nil {
		return nil, err
	}
	defer func() {
		if serr := k.Stop(); serr != nil {
			err = errors.Join(err, fmt.Errorf("stopping Kafka: %w", serr))
		}
	}()
	o.Log("kafka %s ready in %s, replica.lag.time.max.ms %d", k.Version, time.Since(start).Round(time.Second), o.LagMax.Milliseconds())
	var out []StallResult
	for _, c := range cells {
		var brokers v1alpha1.BrokerEndpoints
		brokers.BootstrapServers = k.Bootstrap()
		r, err := runStall(ctx, o, c, brokers, k.Version, workerURL, rec, func(ctx context.Context, from time.Time) (StallResult, error) {
			return stallKafka(ctx, o, c, k, rec, from)
		})
		if err != nil {
			return out, fmt.Errorf("%s: %w", c.Name(), err)
		}
		out = append(out, r)
	}
	return out, nil
}

// runPulsarStalls runs the cells on standalones with three bookies, one
// per bookie configuration of the cells' levels (levels 1 and 3 sync the
// journal before an answer, 2 and 4 do not), in the cells' order. The
// sync shim holds the journal writes and syncs of the third bookie while
// a flag file exists.
func runPulsarStalls(ctx context.Context, o StallOptions, cells []StallCell, dir, workerURL string, rec *recorder) ([]StallResult, error) {
	if len(cells) == 0 {
		return nil, nil
	}
	lib, err := syncdelay.Build(ctx, filepath.Join(dir, "shim"))
	if err != nil {
		return nil, err
	}
	var groups [][]StallCell
	var keys []string
	for _, c := range cells {
		eff, err := durability.Translate(c.System, c.Spec())
		if err != nil {
			return nil, err
		}
		key := fmt.Sprint(eff.Pulsar.Bookie)
		i := slices.Index(keys, key)
		if i < 0 {
			keys, groups = append(keys, key), append(groups, nil)
			i = len(keys) - 1
		}
		groups[i] = append(groups[i], c)
	}
	var out []StallResult
	for i, g := range groups {
		rs, err := runPulsarStandalone(ctx, o, g, filepath.Join(dir, fmt.Sprintf("pulsar%d", i+1)), lib, workerURL, rec)
		out = append(out, rs...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// runPulsarStandalone starts a standalone with the bookie settings of the
// cells' level (all of them share it) and runs the cells on it.
func runPulsarStandalone(ctx context.Context, o StallOptions, cells []StallCell, dir, lib, workerURL string, rec *recorder) (_ []StallResult, err error) {
	base, err := durability.Translate(v1alpha1.SystemPulsar, v1alpha1.DurabilitySpec{Level: ptr.To(cells[0].Level)})
	if err != nil {
		return nil, err
	}
	pdir := filepath.Join(dir, "pulsar")
	// Every bookie's directory is under data/; the flag names the one to
	// stall (stallBookie).
	data := filepath.Join(pdir, "data") + "/"
	flag := filepath.Join(dir, "stall-bookie")
	broker := map[string]string{"bookkeeperClientTimeoutInSeconds": strconv.Itoa(int(o.AddTimeout.Seconds()))}
	for k, v := range base.Pulsar.Broker {
		broker[k] = v
	}
	start := time.Now()
	// Four bookies for ensembles of three: a spare to replace a stalled
	// one with, as a cluster with more bookies than the ensemble has.
	p, err := localbrokers.StartPulsar(ctx, localbrokers.PulsarOptions{
		BrokerConfig: broker, BookieConfig: base.Pulsar.Bookie, Dir: pdir, Log: o.Log, Bookies: 4,
		Env: syncdelay.StallEnv(lib, data, flag), JVM: o.PulsarJVM,
	})
	if err != nil {
		return nil, err
	}
	defer func() {
		if serr := p.Stop(); serr != nil {
			err = errors.Join(err, fmt.Errorf("stopping Pulsar: %w", serr))
		}
	}()
	// The standalone names its bookies' directories after
	// --bookkeeper-dir with the bookie's index appended, and registers
	// them as bk<index>test (LocalBookkeeperEnsemble), which is what
	// ledger metadata lists.
	bookieDir := func(id string) (string, int, error) {
		n, _ := strings.CutPrefix(id, "bk")
		n, _ = strings.CutSuffix(n, "test")
		i, err := strconv.Atoi(n)
		if err != nil || i < 0 || i >= len(p.BookiePorts) {
			return "", 0, fmt.Errorf("bookie %s is none of the standalone's %d (bk0test …)", id, len(p.BookiePorts))
		}
		d := filepath.Join(data, fmt.Sprintf("bookkeeper%d", i)) + "/"
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			return "", 0, fmt.Errorf("bookie %s (index %d) has no directory %s to stall (%v)", id, i, d, err)
		}
		return d, i, nil
	}
	if err := shimLoaded(p.Pids(), syncdelay.StallEnv(lib, data, flag)); err != nil {
		return nil, err
	}
	o.Log("pulsar %s ready in %s (bookies: %v, add timeout %s); a bookie's journal writes and syncs stall while %s exists",
		p.Version, time.Since(start).Round(time.Second), base.Pulsar.Bookie, o.AddTimeout, flag)
	var out []StallResult
	for _, c := range cells {
		var brokers v1alpha1.BrokerEndpoints
		brokers.ServiceURL, brokers.AdminURL = p.ServiceURL(), p.AdminURL()
		r, err := runStall(ctx, o, c, brokers, p.Version, workerURL, rec, func(ctx context.Context, from time.Time) (StallResult, error) {
			return stallBookie(ctx, o, c, p.AdminURL(), flag, bookieDir, rec, from)
		})
		if err != nil {
			return out, fmt.Errorf("%s: %w", c.Name(), err)
		}
		out = append(out, r)
	}
	return out, nil
}

// stallBookie waits until Before after from, then stalls the journal
// writes and syncs of the last bookie of the ensemble the topic is written
// to for the cell's Stall, reading the topic's ensembles before, during and
// after. The stall always ends, also on error.
func stallBookie(ctx context.Context, o StallOptions, c StallCell, adminURL, flag string, bookieDir func(addr string) (string, int, error), rec *recorder, from time.Time) (StallResult, error) {
	var r StallResult
	if err := sleepUntil(ctx, from.Add(o.Before)); err != nil {
		return r, err
	}
	_, topics := rec.take()
	if len(topics) != 1 {
		return r, fmt.Errorf("the run has %d topics, want 1", len(topics))
	}
	topic := topics[0]
	ens, current, err := ensemblesOf(ctx, adminURL, topic)
	if err != nil {
		return r, err
	}
	r.EnsemblesBefore = ens
	dir, index, err := bookieDir(current[len(current)-1])
	if err != nil {
		return r, err
	}
	r.Follower = int32(index)
	release, err := syncdelay.StallPath(flag, dir)
	if err != nil {
		return r, err
	}
	r.From = time.Now()
	defer func() { _ = release() }()
	if err := sleepUntil(ctx, r.From.Add(c.Stall-time.Second)); err != nil {
		return r, err
	}
	if r.EnsemblesDuring, _, err = ensemblesOf(ctx, adminURL, topic); err != nil {
		o.Log("%s: reading the ensembles during the stall: %v", c.Name(), err)
	}
	if err := sleepUntil(ctx, r.From.Add(c.Stall)); err != nil {
		return r, err
	}
	err = release()
	r.To = time.Now()
	if err != nil {
		return r, err
	}
	if err := sleepUntil(ctx, r.To.Add(time.Second)); err != nil {
		return r, err
	}
	if r.EnsemblesAfter, _, err = ensemblesOf(ctx, adminURL, topic); err != nil {
		o.Log("%s: reading the ensembles after the stall: %v", c.Name(), err)
	}
	return r, nil
}

func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return " (" + err.Error() + ")"
}

// runStall runs one cell: the workload through the coordinator and the
// in-process worker, and, Before into its measured phase, the stall.
func runStall(ctx context.Context, o StallOptions, c StallCell, brokers v1alpha1.BrokerEndpoints, version, workerURL string, rec *recorder,
	fault func(ctx context.Context, from time.Time) (StallResult, error)) (StallResult, error) {
	eff, err := durability.Translate(c.System, c.Spec())
	if err != nil {
		return StallResult{}, err
	}
	rec.reset()
	cfg := driver.Config{System: c.System, Durability: eff, Brokers: brokers,
		RunID: fmt.Sprintf("st%s%d", strings.NewReplacer("-", "", ".", "").Replace(c.Name()), time.Now().UnixNano()%1e6)}
	// The measured phase: Before, the stall, and half as long again and
	// 3 s after it for the held messages to drain.
	wl := oneProducer("stall-"+c.Name(), o.Rate, o.MessageSize, o.Warmup, o.Before+c.Stall+c.Stall/2+3*time.Second)

	measuring := make(chan time.Time, 1)
	var once sync.Once
	type stallDone struct {
		r   StallResult
		err error
	}
	stalled := make(chan stallDone, 1)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		var from time.Time
		select {
		case from = <-measuring:
		case <-runCtx.Done():
			stalled <- stallDone{err: errors.New("the run ended before its measured phase")}
			return
		}
		r, err := fault(runCtx, from)
		stalled <- stallDone{r, err}
	}()
	_, err = coordinator.Run(ctx, coordinator.Options{
		Workers: []string{workerURL}, Driver: cfg, Workload: wl, SnapshotInterval: time.Second, Logf: o.Log,
		OnSnapshot: func(s stats.Snapshot) {
			if s.Phase == stats.PhaseMeasure {
				once.Do(func() { measuring <- s.Start })
			}
		},
	})
	cancel()
	sd := <-stalled
	if err != nil {
		return StallResult{}, err
	}
	if sd.err != nil {
		return StallResult{}, sd.err
	}
	acks, _ := rec.take()
	sent := rec.sentBetween(sd.r.From, sd.r.To)
	r := readStall(acks, sent, sd.r.From.Add(-o.Before), sd.r.From, sd.r.To)
	r.Cell, r.Version, r.Settings = c, version, Settings(eff)
	r.LagMax = o.LagMax
	if c.System == v1alpha1.SystemPulsar {
		r.LagMax = o.AddTimeout
	}
	r.Leader, r.Follower = sd.r.Leader, sd.r.Follower
	r.ISRBefore, r.ISRDuring, r.ISRAfter = sd.r.ISRBefore, sd.r.ISRDuring, sd.r.ISRAfter
	r.EnsemblesBefore, r.EnsemblesDuring, r.EnsemblesAfter = sd.r.EnsemblesBefore, sd.r.EnsemblesDuring, sd.r.EnsemblesAfter
	_, verr := r.Verdict()
	if c.PastLag {
		verr = nil
	}
	o.Log("%s (%s): stalled %s (%s); outside %s; during %s; %d of %d early messages held, %.1f %% by chance; first ack after %s, %d unacknowledged: %s%s",
		c.Name(), r.Settings, r.To.Sub(r.From).Round(time.Millisecond), r.BrokersView(),
		r.Outside, r.During, r.Held, r.Early, 100*r.Chance, ms(r.Resumed), r.Unacked, r.Reading(), errSuffix(verr))
	return r, nil
}

// stallKafka waits until Before after from (the measured phase's start),
// stops the partition's follower, reads the ISR while it is stopped,
// continues it after the cell's Stall and reads the ISR once more. The
// follower is always continued, also on error.
func stallKafka(ctx context.Context, o StallOptions, c StallCell, k *localbrokers.Kafka, rec *recorder, from time.Time) (StallResult, error) {
	var r StallResult
	if err := sleepUntil(ctx, from.Add(o.Before)); err != nil {
		return r, err
	}
	_, topics := rec.take()
	if len(topics) != 1 {
		return r, fmt.Errorf("the run has %d topics, want 1", len(topics))
	}
	topic := topics[0]
	leader, replicas, isr, err := partitionOf(ctx, k.Bootstrap(), topic)
	if err != nil {
		return r, err
	}
	r.Leader, r.ISRBefore = leader, isr
	node, live := follower(k, leader, replicas)
	if node == nil {
		return r, fmt.Errorf("topic %s: no follower among replicas %v (leader %d) is a local node", topic, replicas, leader)
	}
	r.Follower = int32(node.ID)

	pid := node.Process.Pid
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return r, fmt.Errorf("stopping node %d (pid %d): %w", node.ID, pid, err)
	}
	r.From = time.Now()
	continued := false
	cont := func() error {
		if continued {
			return nil
		}
		continued = true
		err := syscall.Kill(pid, syscall.SIGCONT)
		r.To = time.Now()
		return err
	}
	defer func() { _ = cont() }()
	if err := sleepUntil(ctx, r.From.Add(c.Stall-time.Second)); err != nil {
		return r, err
	}
	if _, _, isr, err := partitionOf(ctx, strings.Join(live, ","), topic); err == nil {
		r.ISRDuring = isr
	} else {
		o.Log("%s: reading the ISR during the stall: %v", c.Name(), err)
	}
	if err := sleepUntil(ctx, r.From.Add(c.Stall)); err != nil {
		return r, err
	}
	if err := cont(); err != nil {
		return r, fmt.Errorf("continuing node %d (pid %d): %w", node.ID, pid, err)
	}
	// After the stall: once the follower is back in the ISR, or 10 s on.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, _, isr, err := partitionOf(ctx, k.Bootstrap(), topic)
		if err == nil {
			r.ISRAfter = isr
			if slices.Contains(isr, r.Follower) {
				break
			}
		}
		if time.Now().After(deadline) {
			break
		}
		if err := sleepUntil(ctx, time.Now().Add(500*time.Millisecond)); err != nil {
			return r, err
		}
	}
	return r, nil
}

// follower picks the replica to stop: not the leader, and not node 1, the
// KRaft controller, where another follower exists (stopping the controller
// stalls the cluster's metadata too, another fault); and the addresses of
// the other nodes, which answer while it is stopped.
func follower(k *localbrokers.Kafka, leader int32, replicas []int32) (*localbrokers.KafkaNode, []string) {
	var node *localbrokers.KafkaNode
	for i := range k.Nodes {
		n := &k.Nodes[i]
		if int32(n.ID) == leader || !slices.Contains(replicas, int32(n.ID)) || n.Process == nil {
			continue
		}
		if node == nil || node.ID == 1 {
			node = n
		}
	}
	if node == nil {
		return nil, nil
	}
	addrs := strings.Split(k.Bootstrap(), ",")
	var live []string
	for i, n := range k.Nodes {
		if n.ID != node.ID && i < len(addrs) {
			live = append(live, addrs[i])
		}
	}
	return node, live
}

// partitionOf is partition 0 of topic as the brokers at bootstrap see it:
// its leader, replicas and in-sync replicas (sorted).
func partitionOf(ctx context.Context, bootstrap, topic string) (leader int32, replicas, isr []int32, err error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(bootstrap, ",")...), kgo.RequestTimeoutOverhead(2*time.Second))
	if err != nil {
		return 0, nil, nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	td, err := kadm.NewClient(cl).ListTopics(ctx, topic)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("describing topic %s: %w", topic, err)
	}
	t, ok := td[topic]
	if !ok || t.Err != nil {
		return 0, nil, nil, fmt.Errorf("describing topic %s: %v", topic, t.Err)
	}
	p, ok := t.Partitions[0]
	if !ok {
		return 0, nil, nil, fmt.Errorf("topic %s has no partition 0", topic)
	}
	if p.Err != nil {
		return 0, nil, nil, fmt.Errorf("topic %s partition 0: %w", topic, p.Err)
	}
	isr = slices.Clone(p.ISR)
	sort.Slice(isr, func(i, j int) bool { return isr[i] < isr[j] })
	return p.Leader, slices.Clone(p.Replicas), isr, nil
}

func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// StallTable is the results as the Markdown table of docs/methodology.md.
func StallTable(rs []StallResult) string {
	var b strings.Builder
	b.WriteString("| system | level | settings | stall (s) | what was stalled; Kafka's ISR, Pulsar's ensembles per ledger, before / during / after | outside the stall: p50 / p99 / max (ms) | during: p50 / p99 / max (ms) | early messages held | first ack after (s) | the acks |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		isr := r.BrokersView()
		fmt.Fprintf(&b, "| %s %s | %d | %s | %.1f | %s | %s / %s / %s | %s / %s / %s | %d of %d (%.0f %% by chance) | %.2f | %s |\n",
			title(r.Cell.System), r.Version, r.Cell.Level, r.Settings, r.To.Sub(r.From).Seconds(), isr,
			trimMs(r.Outside.P50), trimMs(r.Outside.P99), trimMs(r.Outside.Max),
			trimMs(r.During.P50), trimMs(r.During.P99), trimMs(r.During.Max),
			r.Held, r.Early, 100*r.Chance, r.Resumed.Seconds(), r.Reading())
	}
	return b.String()
}
