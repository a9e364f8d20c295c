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
	"strings"
	"sync"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/coordinator"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/stats"
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
