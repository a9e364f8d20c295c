package experiment

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/syncdelay"
	"github.com/streambench/streambench-operator/internal/worker"
)

// The verdict of a cell comes from which syncs fall between each message's
// send and its ack, not from the latency alone: a busy machine stretches
// every latency (CI once saw level 2 on Kafka at a p50 of 71.61 ms with a
// 30 ms delay, at a load of 12), but it cannot make a broker sync a file it
// does not sync, nor make an ack wait for a sync that ended after it. So the
// worker's drivers are wrapped to keep every message's send and ack time,
// the shim's trace gives every sync's start, end and file, and a message is
// "acked after a data sync" when a sync of a file that holds the messages
// started after its send and ended before its ack.

// ack is one acknowledged message, on the wall clock (the shim's clock).
type ack struct{ send, acked time.Time }

// recorder keeps the acks and topic names of the producers the worker
// creates through its wrapped drivers.
type recorder struct {
	mu     sync.Mutex
	acks   []ack
	sends  []time.Time
	topics []string
}

// reset forgets everything; each cell starts with it.
func (r *recorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.acks, r.sends, r.topics = nil, nil, nil
}

// sentBetween counts the messages sent in [from, to), acknowledged or not.
func (r *recorder) sentBetween(from, to time.Time) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, s := range r.sends {
		if !s.Before(from) && s.Before(to) {
			n++
		}
	}
	return n
}

// take returns what was recorded since the last reset.
func (r *recorder) take() ([]ack, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]ack(nil), r.acks...), append([]string(nil), r.topics...)
}

// drivers are the worker's default drivers, each wrapped to record.
func (r *recorder) drivers() map[v1alpha1.System]worker.DriverFactory {
	ds := worker.DefaultDrivers()
	for sys, f := range ds {
		ds[sys] = func(ctx context.Context, cfg driver.Config) (driver.Driver, error) {
			d, err := f(ctx, cfg)
			if err != nil {
				return nil, err
			}
			return recordingDriver{Driver: d, r: r}, nil
		}
	}
	return ds
}

type recordingDriver struct {
	driver.Driver
	r *recorder
}

func (d recordingDriver) CreateProducer(ctx context.Context, topic string) (driver.Producer, error) {
	p, err := d.Driver.CreateProducer(ctx, topic)
	if err != nil {
		return nil, err
	}
	d.r.mu.Lock()
	d.r.topics = append(d.r.topics, topic)
	d.r.mu.Unlock()
	return recordingProducer{Producer: p, r: d.r}, nil
}

type recordingProducer struct {
	driver.Producer
	r *recorder
}

// Send takes the send time before the client sees the message, and the ack
// time when its callback runs; failed sends are not acks.
func (p recordingProducer) Send(ctx context.Context, key, payload []byte, tag driver.Tag, onAck driver.Acker) {
	send := time.Now()
	p.r.mu.Lock()
	p.r.sends = append(p.r.sends, send)
	p.r.mu.Unlock()
	p.Producer.Send(ctx, key, payload, tag, driver.AckFunc(func(err error) {
		if err == nil {
			acked := time.Now()
			p.r.mu.Lock()
			p.r.acks = append(p.r.acks, ack{send: send, acked: acked})
			p.r.mu.Unlock()
		}
		onAck.Acked(payload, tag, err)
	}))
}

// dataFiles says which synced files hold a cell's messages: for Kafka the
// files of the topics' partition directories (<log dir>/<topic>-<partition>/,
// renamed <topic>-<partition>.<id>-delete when the topic is deleted); for
// Pulsar the bookies' journals (*.txn) and entry logs (*.log), which every
// ledger shares.
func dataFiles(sys v1alpha1.System, topics []string) func(path string) bool {
	if sys == v1alpha1.SystemPulsar {
		return func(path string) bool {
			ext := filepath.Ext(path)
			return ext == ".txn" || ext == ".log"
		}
	}
	return func(path string) bool {
		for _, t := range topics {
			if strings.Contains(path, "/"+t+"-") {
				return true
			}
		}
		return false
	}
}

// coverage is what the trace says of the acks of a measured phase.
type coverage struct {
	// Acks is the messages sent in the phase and acknowledged.
	Acks int
	// AfterSync is how many of them had a data sync between their send
	// and their ack.
	AfterSync int
	// DataSyncs is the syncs of data files that ended in the phase.
	DataSyncs int
	// Chance is the share of the acks' windows that hold a data sync when
	// moved away from their message (chanceOffsets): what coincidence
	// alone gives, at these latencies and these syncs. A busy machine
	// stretches every window, so a background flush (Pulsar's journal
	// page cache, every second) falls into more of them without any ack
	// waiting for it; an ack that waits has its sync whatever the offset
	// says.
	Chance float64
}

// chanceOffsets move an ack's window in time to measure coincidence: not
// whole seconds, so a flush with a period of one second does not land in
// the moved windows only because it landed in the real ones.
var chanceOffsets = []time.Duration{
	-1610 * time.Millisecond, -1190 * time.Millisecond, -730 * time.Millisecond, -370 * time.Millisecond,
	370 * time.Millisecond, 730 * time.Millisecond, 1190 * time.Millisecond, 1610 * time.Millisecond,
}

// Share is AfterSync of Acks, 0 without acks.
func (c coverage) Share() float64 {
	if c.Acks == 0 {
		return 0
	}
	return float64(c.AfterSync) / float64(c.Acks)
}

// cover counts, of the acks whose send falls in [from, to], those that came
// after a sync of a data file that started no earlier than the send and
// ended no later than the ack; and, for Chance, the same of each ack's
// window moved by chanceOffsets, where it stays inside [from, to].
func cover(acks []ack, syncs []syncdelay.Sync, data func(string) bool, from, to time.Time) coverage {
	var ds []syncdelay.Sync
	var c coverage
	for _, s := range syncs {
		if !data(s.Path) {
			continue
		}
		ds = append(ds, s)
		if !s.End.Before(from) && !s.End.After(to) {
			c.DataSyncs++
		}
	}
	fits := func(send, acked time.Time) bool {
		for _, s := range ds {
			if !s.Start.Before(send) && !s.End.After(acked) {
				return true
			}
		}
		return false
	}
	var moved, movedHit int
	for _, a := range acks {
		if a.send.Before(from) || a.send.After(to) {
			continue
		}
		c.Acks++
		if fits(a.send, a.acked) {
			c.AfterSync++
		}
		for _, off := range chanceOffsets {
			send, acked := a.send.Add(off), a.acked.Add(off)
			if send.Before(from) || acked.After(to) {
				continue
			}
			moved++
			if fits(send, acked) {
				movedHit++
			}
		}
	}
	if moved > 0 {
		c.Chance = float64(movedHit) / float64(moved)
	}
	return c
}

// quiesce waits until no data file has been synced for quiet, reading the
// trace every 100 ms, for at most limit; it returns the trace as it last
// read it and whether it got there. A cell must not be measured while the
// syncs queued by the one before are still running (level 1 on Kafka
// leaves seconds of them): they would slow it down, and a sync of the same
// files would cover its acks.
func quiesce(ctx context.Context, trace string, data func(string) bool, quiet, limit time.Duration) ([]syncdelay.Sync, bool, error) {
	deadline := time.Now().Add(limit)
	for {
		syncs, err := syncdelay.ReadTrace(trace)
		if err != nil {
			return nil, false, err
		}
		var last time.Time
		for _, s := range syncs {
			if data(s.Path) && s.End.After(last) {
				last = s.End
			}
		}
		now := time.Now()
		if now.Sub(last) >= quiet {
			return syncs, true, nil
		}
		if now.After(deadline) {
			return syncs, false, nil
		}
		select {
		case <-ctx.Done():
			return nil, false, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
