// Package worker runs the producers and consumers a coordinator assigns to
// it, over any driver.Driver, and measures them the same way for every
// system: intended-time publishing (no coordinated omission), publish, send
// delay, corrected and end-to-end latency into a stats.Recorder, and exact
// per-subscription loss and duplicate accounting from a header in every
// payload. A Worker is used in-process (local mode, tests) or behind its
// HTTP server (Serve, Handler).
package worker

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/metrics"
	"github.com/streambench/streambench-operator/internal/protocol"
	"github.com/streambench/streambench-operator/internal/recycle"
	"github.com/streambench/streambench-operator/internal/stats"
)

// DriverFactory creates a driver for one run.
type DriverFactory func(ctx context.Context, cfg driver.Config) (driver.Driver, error)

// Options configure a Worker.
type Options struct {
	// Name labels this worker's snapshots (e.g. the pod name).
	Name string
	// Drivers creates the driver of each system.
	Drivers map[v1alpha1.System]DriverFactory
	// FlushTimeout bounds the wait for in-flight messages at stop-load
	// (default 60 s).
	FlushTimeout time.Duration
	// Token, when set, is the run's token: every command must carry it
	// (Authorization: Bearer), so only the run's own coordinator drives
	// the worker. Empty (local mode, loopback only) requires none.
	Token string
}

// Worker holds at most one run at a time.
type Worker struct {
	opts Options
	mu   sync.Mutex
	run  *run

	shutdownOnce sync.Once
	shutdown     chan struct{}

	// calls tracks the coordinator's calls, so a draining worker knows
	// when its coordinator has gone quiet (ServeDraining).
	calls callTracker

	// metrics is served on /metrics (internal/metrics).
	metrics *metrics.Collector
}

// New returns an idle worker.
func New(opts Options) *Worker {
	if opts.FlushTimeout <= 0 {
		opts.FlushTimeout = 60 * time.Second
	}
	if opts.Name == "" {
		opts.Name = "worker"
	}
	return &Worker{opts: opts, shutdown: make(chan struct{}), metrics: metrics.New()}
}

// RequestShutdown asks Serve to return (the coordinator's last call).
func (w *Worker) RequestShutdown() { w.shutdownOnce.Do(func() { close(w.shutdown) }) }

// errNotInitialized is returned by every call before Initialize.
var errNotInitialized = errors.New("worker is not initialized: the coordinator must call initialize first")

type run struct {
	index    int
	wl       v1alpha1.WorkloadSpec
	drv      driver.Driver
	payloads *Payloads
	rec      *stats.Recorder
	store    *stats.Store
	interval time.Duration

	mu        sync.Mutex // guards producers, consumers, subs, load, phase ticker
	producers []*producer
	consumers []*consumer
	subs      map[string]*subscription // by topic + "\x00" + subscription
	load      *load
	tickStop  chan struct{}
	tickReset chan struct{}
	tickDone  chan struct{}
	// phaseCutAt is when the last phase change closed an interval (the
	// monotonic clock); a tick handled soon after it is dropped (onTick).
	phaseCutAt time.Time

	sched   *schedule
	offsets atomic.Pointer[protocol.ClockOffsetsRequest]

	firstErr atomic.Pointer[string]

	metrics *metrics.Collector

	// topicsMu makes a DeleteTopics wait for a CreateTopics in progress,
	// so the deletion sees every topic that creation made.
	topicsMu sync.Mutex
}

type load struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func (r *run) fail(err error) {
	s := err.Error()
	r.firstErr.CompareAndSwap(nil, &s)
}

func (w *Worker) current() (*run, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.run == nil {
		return nil, errNotInitialized
	}
	return w.run, nil
}

// Initialize creates the driver and payloads of a run, discarding any
// previous run (its clients are closed).
// SecurityInfo is how the current run's driver reached the brokers, when the
// driver says (driver.SecurityDescriber); nil otherwise.
func (w *Worker) SecurityInfo() *v1alpha1.SecurityInfo {
	w.mu.Lock()
	r := w.run
	w.mu.Unlock()
	if r == nil {
		return nil
	}
	d, ok := r.drv.(driver.SecurityDescriber)
	if !ok {
		return nil
	}
	info := d.SecurityInfo()
	return &info
}

func (w *Worker) Initialize(ctx context.Context, req protocol.InitializeRequest) error {
	w.mu.Lock()
	old := w.run
	w.run = nil
	w.mu.Unlock()
	if old != nil {
		old.close(ctx, true)
	}
	factory, ok := w.opts.Drivers[req.Driver.System]
	if !ok {
		return fmt.Errorf("spec.system %q has no driver in this worker; use kafka or pulsar", req.Driver.System)
	}
	wl := req.Workload
	if len(req.PayloadData) > 0 {
		wl.PayloadFile = ""
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(req.WorkerIndex)))
	var payloads *Payloads
	var err error
	if len(req.PayloadData) > 0 {
		payloads, err = payloadsFromBytes(wl, req.PayloadData)
	} else {
		payloads, err = NewPayloads(wl, rng)
	}
	if err != nil {
		return err
	}
	drv, err := factory(ctx, req.Driver)
	if err != nil {
		return fmt.Errorf("creating the %s driver: %w", req.Driver.System, err)
	}
	interval := time.Duration(req.SnapshotIntervalMillis) * time.Millisecond
	if interval <= 0 {
		interval = 10 * time.Second
	}
	r := &run{
		index: req.WorkerIndex, wl: wl, drv: drv, payloads: payloads,
		rec:      stats.NewRecorder(fmt.Sprintf("%s-%d", w.opts.Name, req.WorkerIndex), stats.PhaseWarmup, time.Now()),
		store:    stats.NewStore(),
		interval: interval,
		subs:     map[string]*subscription{},
		sched:    newSchedule(),
		metrics:  w.metrics,
	}
	w.metrics.Reset(req.Driver.RunID)
	r.offsets.Store(&protocol.ClockOffsetsRequest{})
	w.mu.Lock()
	w.run = r
	w.mu.Unlock()
	return nil
}

func payloadsFromBytes(wl v1alpha1.WorkloadSpec, data []byte) (*Payloads, error) {
	if len(data) != int(wl.MessageSize) {
		return nil, fmt.Errorf("spec.workload.payloadFile has %d bytes but messageSize is %d; they must be equal (as in OMB)", len(data), wl.MessageSize)
	}
	if len(data) < HeaderSize {
		return nil, fmt.Errorf("spec.workload.messageSize (%d) must be at least %d bytes (the payload header); raise messageSize", len(data), HeaderSize)
	}
	return &Payloads{templates: [][]byte{append([]byte(nil), data...)}}, nil
}

// CreateTopics creates the run's topics (leader only) and returns their
// names.
func (w *Worker) CreateTopics(ctx context.Context, req protocol.CreateTopicsRequest) (protocol.CreateTopicsResponse, error) {
	r, err := w.current()
	if err != nil {
		return protocol.CreateTopicsResponse{}, err
	}
	topics := make([]driver.Topic, req.Topics)
	names := make([]string, req.Topics)
	for i := range topics {
		names[i] = r.drv.TopicName(i)
		topics[i] = driver.Topic{Name: names[i], Partitions: req.PartitionsPerTopic}
	}
	r.topicsMu.Lock()
	defer r.topicsMu.Unlock()
	// A creation, once begun, ends on its own time even when the caller
	// goes away (a coordinator stopped by SIGTERM while topics were being
	// created): cancelled halfway, a create request already sent could
	// still make its topic after the coordinator's DeleteTopics had listed
	// the run's topics, and leave it behind.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), protocol.CreateTopicsTimeout)
	defer cancel()
	if err := r.drv.CreateTopics(ctx, topics); err != nil {
		return protocol.CreateTopicsResponse{}, fmt.Errorf("creating %d topics: %w", len(topics), err)
	}
	return protocol.CreateTopicsResponse{Topics: names}, nil
}

// CreateProducers creates the assigned producers.
func (w *Worker) CreateProducers(ctx context.Context, req protocol.CreateProducersRequest) error {
	r, err := w.current()
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(r.index)+1))
	for _, a := range req.Producers {
		p, err := r.drv.CreateProducer(ctx, a.Topic)
		if err != nil {
			return fmt.Errorf("creating producer %d on topic %s: %w", a.ID, a.Topic, err)
		}
		keys, err := NewKeyDistributor(r.wl.KeyDistributor, rand.New(rand.NewPCG(rng.Uint64(), uint64(a.ID))))
		if err != nil {
			_ = p.Close()
			return err
		}
		r.mu.Lock()
		r.producers = append(r.producers, &producer{
			id: a.ID, topic: a.Topic, client: p, keys: keys,
			payloads: r.payloads.Clone(), size: r.payloads.Size(), rec: r.rec, acks: r.rec.ShardFor(a.ID), run: r,
			bufs: recycle.NewBuffers(r.payloads.Size()),
		})
		r.mu.Unlock()
	}
	return nil
}

// CreateConsumers subscribes the assigned consumers.
func (w *Worker) CreateConsumers(ctx context.Context, req protocol.CreateConsumersRequest) error {
	r, err := w.current()
	if err != nil {
		return err
	}
	for _, a := range req.Consumers {
		key := a.Topic + "\x00" + a.Subscription
		r.mu.Lock()
		s, ok := r.subs[key]
		if !ok {
			s = &subscription{
				topic: a.Topic, name: a.Subscription, catchUp: a.CatchUp,
				rec: r.rec.Subscription(a.Subscription, a.CatchUp), run: r,
				sets: map[uint32]*SeqSet{},
			}
			r.subs[key] = s
		}
		r.mu.Unlock()
		c, err := r.drv.CreateConsumer(ctx, a.Topic, a.Subscription, s.onMessage)
		if err != nil {
			return fmt.Errorf("creating a consumer of subscription %s on topic %s: %w", a.Subscription, a.Topic, err)
		}
		r.mu.Lock()
		r.consumers = append(r.consumers, &consumer{client: c, sub: s})
		r.mu.Unlock()
	}
	return nil
}

// SetClockOffsets sets the offsets used to correct end-to-end latency.
func (w *Worker) SetClockOffsets(req protocol.ClockOffsetsRequest) error {
	r, err := w.current()
	if err != nil {
		return err
	}
	if req.ProducerMicros == nil {
		req.ProducerMicros = map[uint32]int64{}
	}
	r.offsets.Store(&req)
	return nil
}

// Probe sends one probe message from every producer and waits (bounded by
// ctx) for their acknowledgements. Probes are not counted as load.
func (w *Worker) Probe(ctx context.Context) (protocol.ProbeResponse, error) {
	r, err := w.current()
	if err != nil {
		return protocol.ProbeResponse{}, err
	}
	r.mu.Lock()
	ps := append([]*producer(nil), r.producers...)
	r.mu.Unlock()
	errs := make(chan error, len(ps))
	for _, p := range ps {
		buf := make([]byte, p.size)
		now := time.Now().UnixMicro()
		p.payloads.Fill(buf, Header{Probe: true, ProducerID: p.id, SendMicros: now, IntendedMicros: now})
		p.client.Send(ctx, nil, buf, driver.Tag{}, driver.AckFunc(func(err error) { errs <- err }))
	}
	acked := 0
	for range ps {
		select {
		case err := <-errs:
			if err != nil {
				return protocol.ProbeResponse{Acked: acked}, fmt.Errorf("probe message not acknowledged: %w", err)
			}
			acked++
		case <-ctx.Done():
			return protocol.ProbeResponse{Acked: acked}, fmt.Errorf("waiting for probe acknowledgements (%d of %d): %w", acked, len(ps), ctx.Err())
		}
	}
	return protocol.ProbeResponse{Acked: acked}, nil
}

// StartLoad starts every producer at StartAtMicros (this worker's clock)
// and starts cutting snapshots.
func (w *Worker) StartLoad(req protocol.StartLoadRequest) error {
	r, err := w.current()
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.load != nil {
		return errors.New("load already started: call stop-load first")
	}
	start := onMonotonic(time.UnixMicro(req.StartAtMicros))
	phase := stats.Phase(req.Phase)
	if phase == "" {
		phase = stats.PhaseWarmup
	}
	// Whatever was recorded before the start (probes are not recorded,
	// but a restarted load may be) goes into its own snapshot.
	r.cutPhaseLocked(time.Now(), phase)
	r.startTicker()
	r.setRateLocked(req.RatePerSec)
	ctx, cancel := context.WithCancel(context.Background())
	l := &load{cancel: cancel}
	// The producers are dealt to the senders in turn; each sender paces
	// its producers at their places in the worker's interval.
	procs := runtime.GOMAXPROCS(0)
	n := senders(len(r.producers), procs)
	for j := range n {
		var ps []*producer
		var phases []float64
		for i := j; i < len(r.producers); i += n {
			ps = append(ps, r.producers[i])
			phases = append(phases, float64(i)/float64(len(r.producers)))
		}
		pc := newPacer(r.sched, start, phases)
		pc.holdP = n < procs
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			sendLoop(ctx, pc, ps)
		}()
	}
	r.load = l
	return nil
}

func (r *run) setRateLocked(total float64) {
	n := len(r.producers)
	if n == 0 {
		return
	}
	r.sched.set(total / float64(n))
}

// AdjustRate changes this worker's total rate.
func (w *Worker) AdjustRate(req protocol.AdjustRateRequest) error {
	r, err := w.current()
	if err != nil {
		return err
	}
	if req.RatePerSec < 0 {
		return fmt.Errorf("rate %v must not be negative", req.RatePerSec)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.setRateLocked(req.RatePerSec)
	return nil
}

// SetPhase closes the current interval and labels what follows.
func (w *Worker) SetPhase(req protocol.PhaseRequest) (protocol.PhaseResponse, error) {
	r, err := w.current()
	if err != nil {
		return protocol.PhaseResponse{}, err
	}
	if req.Phase == "" {
		return protocol.PhaseResponse{}, errors.New("phase must not be empty")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	seq := r.cutPhaseLocked(time.Now(), stats.Phase(req.Phase))
	r.startTicker() // consumer-only workers start their intervals here
	r.resetTickerLocked()
	return protocol.PhaseResponse{Seq: seq}, nil
}

// cutLocked closes the interval at now, on the coordinator's request, and
// restarts the ticker. r.mu is held.
func (r *run) cutLocked(now time.Time) {
	r.appendSnap(r.rec.Cut(now))
	r.phaseCutAt = now
	r.resetTickerLocked()
}

// resetTickerLocked restarts the interval ticker after a cut, so the next
// interval is a whole one on every worker. r.mu is held.
func (r *run) resetTickerLocked() {
	if r.tickReset != nil {
		select {
		case r.tickReset <- struct{}{}:
		default:
		}
	}
}

// onMonotonic is the wall-clock instant wall as a time with a monotonic
// reading: the pacers' grids are built from it, so their waits and the
// send delays are measured on the monotonic clock, and a step of the wall
// clock mid-run (NTP) does not read as the tool sending late or early.
func onMonotonic(wall time.Time) time.Time {
	now := time.Now()
	return now.Add(wall.Sub(now.Round(0)))
}

// cutPhaseLocked closes the interval at now and starts phase next at its
// interval 0. r.mu is held.
func (r *run) cutPhaseLocked(now time.Time, next stats.Phase) uint64 {
	r.phaseCutAt = now
	return r.appendSnap(r.rec.CutPhase(now, next))
}

// onTick closes the interval at now, on the interval ticker. A tick that
// fired before a phase change, or before the change's reset reached the
// ticker, is handled just after the change: cut, it would make a sliver
// of the new phase's interval 0 and number this worker's intervals one
// ahead of the others', and the phase (per index the longest, summed)
// one interval too long, every rate of it low. So a tick within half an
// interval of a phase change is dropped; the reset's tick follows.
func (r *run) onTick(now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if now.Sub(r.phaseCutAt) < r.interval/2 {
		return
	}
	r.appendSnap(r.rec.Cut(now))
}

// appendSnap keeps a snapshot; an empty first interval of a phase is kept
// too, so every worker's Index lines up. It records where each producer's
// sequence numbers stood at the cut (stats.Producer.SeqEnds). r.mu is
// held. /metrics adds it up as it is kept.
func (r *run) appendSnap(s stats.Snapshot) uint64 {
	for _, p := range r.producers {
		if s.Producer.SeqEnds == nil {
			s.Producer.SeqEnds = make(map[uint32]uint64, len(r.producers))
		}
		s.Producer.SeqEnds[p.id] = p.nextSeq.Load()
	}
	r.metrics.Add(s)
	r.metrics.SetPhase(r.rec.Phase())
	return r.store.Append(s)
}

// startTicker cuts a snapshot every interval, restarting the interval on a
// phase change so the workers' intervals line up.
func (r *run) startTicker() {
	if r.tickStop != nil {
		return
	}
	r.tickStop, r.tickReset, r.tickDone = make(chan struct{}), make(chan struct{}, 1), make(chan struct{})
	stop, reset, done := r.tickStop, r.tickReset, r.tickDone
	go func() {
		defer close(done)
		t := time.NewTicker(r.interval)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-reset:
				t.Reset(r.interval)
			case <-t.C:
				r.onTick(time.Now())
			}
		}
	}()
}

func (r *run) stopTicker() {
	if r.tickStop == nil {
		return
	}
	close(r.tickStop)
	<-r.tickDone
	r.tickStop = nil
}

// Pause pauses consumers (only catch-up ones when CatchUpOnly).
func (w *Worker) Pause(req protocol.PauseRequest, pause bool) error {
	r, err := w.current()
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.consumers {
		if req.CatchUpOnly && !c.sub.catchUp {
			continue
		}
		if pause {
			c.client.Pause()
		} else {
			c.client.Resume()
		}
	}
	return nil
}

// StopLoad stops publishing and waits (bounded) until every message in
// flight is acknowledged or failed, then cuts a final snapshot. Consumers
// keep running, so the coordinator can wait for them to catch up.
func (w *Worker) StopLoad(ctx context.Context) error {
	r, err := w.current()
	if err != nil {
		return err
	}
	r.mu.Lock()
	l := r.load
	r.load = nil
	ps := append([]*producer(nil), r.producers...)
	r.mu.Unlock()
	if l == nil {
		return nil
	}
	l.cancel()
	l.wg.Wait()
	fctx, cancel := context.WithTimeout(ctx, w.opts.FlushTimeout)
	defer cancel()
	var errs []error
	for _, p := range ps {
		if err := p.client.Flush(fctx); err != nil {
			errs = append(errs, fmt.Errorf("flushing producer %d: %w", p.id, err))
		}
		// A client with no send timeout (OMB's) holds a send for as long
		// as the brokers cannot write it, and its flush may return with
		// sends unanswered. Closing it lets it fail them through their
		// ack callbacks where it can (franz-go fails what it buffers);
		// what is still unanswered then is counted by number in Received
		// (the Pulsar Go client left 10,001 so in TestRunPulsarKillBookie,
		// which before counted them acknowledged, and lost).
		if n := p.unanswered(); n > 0 {
			if err := p.close(); err != nil {
				errs = append(errs, fmt.Errorf("closing producer %d with %d sends unanswered: %w", p.id, n, err))
			}
		}
	}
	return errors.Join(errs...)
}

// Stats returns the snapshots after seq, releasing those up to seq.
func (w *Worker) Stats(after uint64, cut bool) (protocol.StatsResponse, error) {
	r, err := w.current()
	if err != nil {
		return protocol.StatsResponse{}, err
	}
	if cut {
		// A cut is a boundary the coordinator chose (a hold window of the
		// rate search, the final read): like a phase change, it restarts
		// the ticker, and a tick that fired just before it is dropped, so
		// no sliver of an interval follows it and the workers' intervals
		// keep lining up by Index.
		r.mu.Lock()
		r.cutLocked(time.Now())
		r.mu.Unlock()
	}
	r.store.Ack(after)
	return protocol.StatsResponse{Snapshots: r.store.After(after)}, nil
}

// Counters are the live counters.
func (w *Worker) Counters() (protocol.CountersResponse, error) {
	r, err := w.current()
	if err != nil {
		return protocol.CountersResponse{}, err
	}
	r.mu.Lock()
	ps := append([]*producer(nil), r.producers...)
	subs := make([]*subscription, 0, len(r.subs))
	for _, s := range r.subs {
		subs = append(subs, s)
	}
	r.mu.Unlock()
	var out protocol.CountersResponse
	for _, p := range ps {
		out.Producers = append(out.Producers, protocol.ProducerCounters{
			ID: p.id, Topic: p.topic, Sent: int64(p.nextSeq.Load()), Acked: p.acked.Load(), Failed: p.failed.Load(),
		})
	}
	sort.Slice(subs, func(i, j int) bool { return subs[i].topic+subs[i].name < subs[j].topic+subs[j].name })
	for _, s := range subs {
		out.Subscriptions = append(out.Subscriptions, s.counters())
	}
	if e := r.firstErr.Load(); e != nil {
		out.FirstError = *e
	}
	return out, nil
}

// Received returns the final accounting material: each producer's sent
// count and failed sequence numbers, each subscription's received sets.
func (w *Worker) Received() (protocol.ReceivedResponse, error) {
	r, err := w.current()
	if err != nil {
		return protocol.ReceivedResponse{}, err
	}
	r.mu.Lock()
	ps := append([]*producer(nil), r.producers...)
	subs := make([]*subscription, 0, len(r.subs))
	for _, s := range r.subs {
		subs = append(subs, s)
	}
	r.mu.Unlock()
	var out protocol.ReceivedResponse
	for _, p := range ps {
		sent := p.nextSeq.Load()
		p.failedMu.Lock()
		failed, err := p.failedSeqs.MarshalBinary()
		nFailed := p.failedSeqs.Len()
		fin := protocol.ProducerFinal{ID: p.id, Topic: p.topic, Sent: sent, Failed: nFailed, FailedSet: failed}
		if err == nil && p.unanswered() > 0 {
			p.ackedMu.Lock()
			un := Outside(sent, &p.ackedSeqs, &p.failedSeqs)
			p.ackedMu.Unlock()
			fin.Unanswered = un.Len()
			fin.UnansweredSet, err = un.MarshalBinary()
		}
		p.failedMu.Unlock()
		if err != nil {
			return out, err
		}
		out.Producers = append(out.Producers, fin)
	}
	for _, s := range subs {
		ss, err := s.seqs()
		if err != nil {
			return out, err
		}
		out.Subscriptions = append(out.Subscriptions, ss)
	}
	return out, nil
}

// Stop stops the load and closes every client; the leader keeps its driver
// until DeleteTopics.
func (w *Worker) Stop(ctx context.Context, keepDriver bool) error {
	w.mu.Lock()
	r := w.run
	w.mu.Unlock()
	if r == nil {
		return nil
	}
	_ = w.StopLoad(ctx)
	return r.close(ctx, !keepDriver)
}

// DeleteTopics deletes the run's topics and closes the driver (leader).
func (w *Worker) DeleteTopics(ctx context.Context) error {
	r, err := w.current()
	if err != nil {
		return err
	}
	r.topicsMu.Lock()
	defer r.topicsMu.Unlock()
	if err := r.drv.DeleteTopics(ctx); err != nil {
		// The run and its driver stay, so the coordinator can ask again
		// (its cleanup does, for a broker not ready for a while); Stop or
		// the worker's end closes them.
		return err
	}
	r.close(ctx, true)
	w.mu.Lock()
	if w.run == r {
		w.run = nil
	}
	w.mu.Unlock()
	return nil
}

// Close stops everything (process shutdown).
func (w *Worker) Close(ctx context.Context) error { return w.Stop(ctx, false) }

func (r *run) close(ctx context.Context, closeDriver bool) error {
	r.mu.Lock()
	l := r.load
	r.load = nil
	ps, cs := r.producers, r.consumers
	r.producers, r.consumers = nil, nil
	r.mu.Unlock()
	if l != nil {
		l.cancel()
		l.wg.Wait()
	}
	r.mu.Lock()
	r.stopTicker()
	r.mu.Unlock()
	var errs []error
	for _, c := range cs {
		if err := c.client.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	for _, p := range ps {
		if err := p.close(); err != nil {
			errs = append(errs, err)
		}
	}
	if closeDriver && r.drv != nil {
		if err := r.drv.Close(); err != nil {
			errs = append(errs, err)
		}
		r.drv = nil
	}
	return errors.Join(errs...)
}
