package localrun

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/driver/kafka"
	"github.com/streambench/streambench-operator/internal/faults"
	"github.com/streambench/streambench-operator/internal/localbrokers"
)

// localNode is the local Kafka node a fault's target hits, by node id.
// localbrokers numbers the brokers from 1 (node.id, process kafka-<id>,
// directory node-<id>); targets count from 0 as a cluster's pods do. So
// broker-<n> is node n+1 (process kafka-<n+1>). controller-0 is node 1
// when node 1 is the KRaft controller too; 0 when the controller runs
// apart (a run with faults: kafka-controller). leader is resolved at the
// fault's time, not here (kafkaProcs). Pure.
func localNode(t v1alpha1.FaultTarget, nodes int) (int, error) {
	role, n, err := t.Parse()
	if err != nil {
		return 0, err
	}
	switch {
	case role == v1alpha1.RoleLeader:
		return 0, errors.New("leader is looked up when the fault comes, not mapped to a node beforehand")
	case role == v1alpha1.RoleController && n == 0:
		return 1, nil
	case role != v1alpha1.RoleBroker:
		return 0, fmt.Errorf("local mode's Kafka has no %s-%d: its processes are broker-0 to broker-%d, and controller-0 (the same process as broker-0)", role, n, nodes-1)
	case n >= nodes:
		return 0, fmt.Errorf("local mode started %d Kafka nodes, broker-0 to broker-%d; there is no broker-%d", nodes, nodes-1, n)
	}
	return n + 1, nil
}

// faultProc is a process a fault hits.
type faultProc struct {
	name  string
	pid   int
	alive func() bool
	// resolved is what the record says the target was; empty for
	// "process <name> (pid <pid>)".
	resolved string
	// restart starts the killed process again and returns once it
	// serves (the new process's pid); nil when it cannot be restarted.
	restart func(ctx context.Context) (int, error)
	// watch, if set, starts watching what the fault does until ctx ends
	// (a bookie's: the first topic's ensembles); its report is added to
	// the fault's message when the run ends.
	watch func(ctx context.Context) (report func() string)
}

// restartTimeout bounds a killed broker's return: its JVM start, its
// port, its registration with the controller (StartKafka's own bound
// for a whole cluster is two minutes).
const restartTimeout = 2 * time.Minute

// findProc finds the process a target names at the fault's time; ctx
// bounds a look-up it needs (leader).
type findProc func(ctx context.Context, t v1alpha1.FaultTarget) (faultProc, error)

// lookupLeader asks the brokers who serves the run's first topic's
// partition 0 now, and names the topic.
type lookupLeader func(ctx context.Context) (topic string, st kafka.PartitionState, err error)

// leaderLookupTimeout bounds a leader's look-up at the fault's time: the
// fault waits for it (its injectedAt is after it), and a look-up that
// does not answer fails the fault, not the run.
const leaderLookupTimeout = 15 * time.Second

// kafkaLeader looks up partition 0 of the repeat's first topic (the run
// id names it, as the driver does) on the local brokers.
func kafkaLeader(bootstrap string, sec *driver.Security, runID string) lookupLeader {
	return func(ctx context.Context) (string, kafka.PartitionState, error) {
		topic := kafka.RunTopic(runID, 0)
		st, err := kafka.LookupPartition(ctx, bootstrap, sec, topic, 0)
		return topic, st, err
	}
}

// kafkaProcs finds the process of a target among the local Kafka's nodes;
// leader through lookup, when the fault comes. restarted is told after a
// killed node is back (the run's broker pids change).
func kafkaProcs(k *localbrokers.Kafka, lookup lookupLeader, restarted func()) findProc {
	proc := func(id int, p *localbrokers.Process) faultProc {
		return faultProc{name: p.Name, pid: p.Pid, alive: func() bool { return !p.Exited() },
			restart: func(ctx context.Context) (int, error) {
				np, err := k.Restart(ctx, id, restartTimeout)
				if np == nil {
					return 0, err
				}
				if restarted != nil {
					restarted()
				}
				return np.Pid, err
			}}
	}
	return func(ctx context.Context, t v1alpha1.FaultTarget) (faultProc, error) {
		if k == nil {
			return faultProc{}, errors.New("local mode injects faults only into the Kafka nodes it started")
		}
		if t == v1alpha1.FaultTarget(v1alpha1.RoleLeader) {
			return leaderProc(ctx, k, lookup, proc)
		}
		if t == "controller-0" && k.Controller != nil {
			return proc(k.Controller.ID, k.NodeProcess(k.Controller.ID)), nil
		}
		id, err := localNode(t, len(k.Nodes))
		if err != nil {
			return faultProc{}, err
		}
		p := k.NodeProcess(id)
		if p == nil {
			return faultProc{}, fmt.Errorf("kafka node %d has no process", id)
		}
		return proc(id, p), nil
	}
}

// aimed finds the target aim names from who serves the first topic's
// partition 0 at the fault's time (Options.aimFault, tests only).
func aimed(find findProc, lookup lookupLeader, aim func(v1alpha1.FaultTarget, kafka.PartitionState) v1alpha1.FaultTarget) findProc {
	return func(ctx context.Context, t v1alpha1.FaultTarget) (faultProc, error) {
		lctx, cancel := context.WithTimeout(ctx, leaderLookupTimeout)
		defer cancel()
		_, st, err := lookup(lctx)
		if err != nil {
			return faultProc{}, fmt.Errorf("looking up the first topic's partition 0 to aim the fault: %w", err)
		}
		return find(ctx, aim(t, st))
	}
}

// keptDown finds as find does, with no way to restart what it finds
// (Options.keepKilledDown, tests only).
func keptDown(find findProc) findProc {
	return func(ctx context.Context, t v1alpha1.FaultTarget) (faultProc, error) {
		p, err := find(ctx, t)
		p.restart = nil
		return p, err
	}
}

// leaderProc is the process of the broker that leads partition 0 of the
// run's first topic now, as the brokers say.
func leaderProc(ctx context.Context, k *localbrokers.Kafka, lookup lookupLeader, proc func(int, *localbrokers.Process) faultProc) (faultProc, error) {
	if lookup == nil {
		return faultProc{}, errors.New("no way to ask the brokers who leads the first topic's partition 0")
	}
	ctx, cancel := context.WithTimeout(ctx, leaderLookupTimeout)
	defer cancel()
	topic, st, err := lookup(ctx)
	if err != nil {
		return faultProc{}, fmt.Errorf("looking up the leader of the first topic's partition 0: %w", err)
	}
	id := int(st.Leader)
	np := k.NodeProcess(id)
	if id < 1 || id > len(k.Nodes) || np == nil {
		return faultProc{}, fmt.Errorf("%s-0 is led by node %d, which is not one of the %d brokers local mode started", topic, id, len(k.Nodes))
	}
	p := proc(id, np)
	p.resolved = fmt.Sprintf("broker-%d (%s, pid %d; leader of %s-0)", id-1, p.name, p.pid, topic)
	return p, nil
}

// faultInjector carries out spec.faults in one repeat of a local run: it
// waits for the measured phase to start (the coordinator's OnMeasure),
// then takes the schedule's steps (faults.Schedule, pure) as they come due
// and records each fault as status.faults would. A fault that cannot be
// injected is recorded with its reason; it never fails the run.
type faultInjector struct {
	steps  []faults.Step
	find   findProc
	signal func(pid int, sig syscall.Signal) error
	say    func(string, ...any)

	started chan time.Time
	once    sync.Once
	// ctx ends with finish: a leader's look-up is not waited for then.
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	end    sync.Once

	mu       sync.Mutex
	measured bool
	status   []v1alpha1.FaultStatus
	// paused are the faults whose process is stopped and not yet let go.
	paused map[int]faultProc
	// restarts are the killed processes being started again; finish
	// waits for them, so the run stops brokers that are whole.
	restarts sync.WaitGroup
	// watches are the injected faults' watch reports, by fault index.
	watches map[int]func() string
	// out is finish's result.
	out []v1alpha1.FaultStatus
}

// startFaults starts the injector of one repeat (repeat is 0 for a run
// that is not repeated); nil when the run has no faults.
func startFaults(ctx context.Context, fs []v1alpha1.Fault, repeat int, find findProc,
	signal func(int, syscall.Signal) error, say func(string, ...any)) *faultInjector {
	if len(fs) == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	f := &faultInjector{steps: faults.Schedule(fs), find: find, signal: signal, say: say,
		started: make(chan time.Time, 1), cancel: cancel, done: make(chan struct{}), paused: map[int]faultProc{}, watches: map[int]func() string{}}
	for i, x := range fs {
		f.status = append(f.status, v1alpha1.FaultStatus{Index: int32(i), Repeat: int32(repeat), Action: x.Action, Target: x.Target})
	}
	f.ctx = ctx
	go f.run(ctx)
	return f
}

// signalPid signals the JVM alone: a broker JVM has no children, and its
// pid leads its process group.
func signalPid(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }

// measureStarted is the coordinator's OnMeasure: the schedule counts from
// start. It does not block.
func (f *faultInjector) measureStarted(start time.Time) {
	if f == nil {
		return
	}
	f.once.Do(func() { f.started <- start })
}

func (f *faultInjector) run(ctx context.Context) {
	defer close(f.done)
	var start time.Time
	select {
	case start = <-f.started:
	case <-ctx.Done():
		return
	}
	f.mu.Lock()
	f.measured = true
	f.mu.Unlock()
	next := 0
	for next < len(f.steps) {
		end := faults.Due(f.steps, next, time.Since(start))
		for ; next < end; next++ {
			f.apply(f.steps[next])
		}
		if next == len(f.steps) {
			return
		}
		t := time.NewTimer(time.Until(start.Add(f.steps[next].Offset)))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// apply takes one step and records it.
func (f *faultInjector) apply(s faults.Step) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := &f.status[s.Index]
	if s.Kind == faults.Clear {
		p, ok := f.paused[s.Index]
		if !ok {
			return // never injected: its message says why
		}
		delete(f.paused, s.Index)
		if err := f.signal(p.pid, syscall.SIGCONT); err != nil {
			st.Message = fmt.Sprintf("SIGCONT to %s (pid %d) failed: %v", p.name, p.pid, err)
			f.say("fault %d: %s", s.Index, st.Message)
			return
		}
		st.ClearedAt = ptr.To(metav1.NowMicro())
		f.say("fault %d: %s %s cleared: SIGCONT to %s (pid %d)", s.Index, s.Fault.Action, s.Fault.Target, p.name, p.pid)
		return
	}
	p, err := f.find(f.ctx, s.Fault.Target)
	if err != nil {
		st.Message = "not injected: " + err.Error()
		f.say("fault %d: %s", s.Index, st.Message)
		return
	}
	st.Resolved = p.resolved
	if st.Resolved == "" {
		st.Resolved = fmt.Sprintf("process %s (pid %d)", p.name, p.pid)
	}
	if !p.alive() {
		st.Message = fmt.Sprintf("not injected: %s (pid %d) is not running (killed by an earlier fault and not back yet)", p.name, p.pid)
		f.say("fault %d: %s", s.Index, st.Message)
		return
	}
	sig, sigName := syscall.SIGKILL, "SIGKILL"
	if s.Fault.Action == v1alpha1.FaultPause {
		sig, sigName = syscall.SIGSTOP, "SIGSTOP"
	}
	if err := f.signal(p.pid, sig); err != nil {
		st.Message = fmt.Sprintf("not injected: %s to %s (pid %d): %v", sigName, p.name, p.pid, err)
		f.say("fault %d: %s", s.Index, st.Message)
		return
	}
	st.Injected, st.InjectedAt = true, ptr.To(metav1.NowMicro())
	if p.watch != nil {
		f.watches[s.Index] = p.watch(f.ctx)
	}
	switch s.Fault.Action {
	case v1alpha1.FaultPause:
		f.paused[s.Index] = p
	case v1alpha1.FaultKill:
		f.restartKilled(s.Index, p)
	}
	what := fmt.Sprintf("%s (pid %d)", p.name, p.pid)
	if p.resolved != "" {
		what += ": " + p.resolved
	}
	f.say("fault %d: %s %s: %s to %s", s.Index, s.Fault.Action, s.Fault.Target, sigName, what)
}

// restartKilled starts a killed process again at once, as the kubelet
// restarts a killed container, so a local Kill measures the broker's
// return as a cluster's does: clearedAt is when it serves again. Called
// with f.mu held; the restart itself runs without it.
func (f *faultInjector) restartKilled(index int, p faultProc) {
	st := &f.status[index]
	if p.restart == nil {
		st.Message = fmt.Sprintf("%s was not restarted: it stayed down for the rest of the run", p.name)
		return
	}
	f.restarts.Add(1)
	go func() {
		defer f.restarts.Done()
		// Not f.ctx: finish cancels it as the run ends, and a broker half
		// started would be stopped in the middle of its start.
		ctx, cancel := context.WithTimeout(context.Background(), restartTimeout)
		defer cancel()
		pid, err := p.restart(ctx)
		f.mu.Lock()
		defer f.mu.Unlock()
		st := &f.status[index]
		if err != nil {
			st.Message = fmt.Sprintf("local mode restarted %s, but it did not come back: %v", p.name, err)
			f.say("fault %d: %s", index, st.Message)
			return
		}
		st.ClearedAt = ptr.To(metav1.NowMicro())
		back := st.ClearedAt.Sub(st.InjectedAt.Time).Seconds()
		st.Message = fmt.Sprintf("local mode restarted %s at once, as the kubelet restarts a killed container: serving again (pid %d) %.1f s after the kill", p.name, pid, back)
		f.say("fault %d: %s %s cleared: %s back as pid %d after %.1f s", index, v1alpha1.FaultKill, st.Target, p.name, pid, back)
	}()
}

// finish stops the injector, lets go of a process still paused (the run
// ended inside a pause: a failed or interrupted run; it is not cleared
// inside the run, so clearedAt stays absent) and returns what became of
// every fault. Idempotent; nil for a run without faults.
func (f *faultInjector) finish() []v1alpha1.FaultStatus {
	if f == nil {
		return nil
	}
	f.end.Do(func() {
		f.cancel()
		<-f.done
		f.restarts.Wait()
		f.mu.Lock()
		defer f.mu.Unlock()
		for i, p := range f.paused {
			st := &f.status[i]
			if err := f.signal(p.pid, syscall.SIGCONT); err != nil {
				st.Message = fmt.Sprintf("the run ended inside the pause; SIGCONT to %s (pid %d) failed: %v", p.name, p.pid, err)
			} else {
				st.Message = fmt.Sprintf("the run ended inside the pause; %s (pid %d) was let go (SIGCONT) after it", p.name, p.pid)
			}
			delete(f.paused, i)
		}
		// After the pauses' messages, which replace what was said.
		for i, report := range f.watches {
			st := &f.status[i]
			st.Message = strings.TrimPrefix(st.Message+"; "+report(), "; ")
		}
		for i := range f.status {
			st := &f.status[i]
			if st.Injected || st.Message != "" {
				continue
			}
			if f.measured {
				st.Message = "not injected: the run ended before the fault's time"
			} else {
				st.Message = "not injected: the run did not reach its measured phase"
			}
		}
		f.out = append([]v1alpha1.FaultStatus(nil), f.status...)
	})
	return f.out
}
