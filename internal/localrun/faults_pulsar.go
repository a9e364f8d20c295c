package localrun

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver/pulsar"
	"github.com/streambench/streambench-operator/internal/localbrokers"
)

// pulsarFirstTopic is the partition a run's writes to its first topic land
// on first: the topic whose ledger a bookie fault is placed against.
func pulsarFirstTopic(runID string, partitions int32) string {
	return pulsar.FirstTopic(runID, partitions)
}

// pulsarBookie is the bookie a target names in a local Pulsar of bookies
// bookies, counting from 0 as a cluster's pods do. The standalone's broker
// and ZooKeeper are one JVM that no fault may take whole. Pure.
func pulsarBookie(t v1alpha1.FaultTarget, bookies int) (int, error) {
	role, n, err := t.Parse()
	if err != nil {
		return 0, err
	}
	switch {
	case role != v1alpha1.RoleBookie:
		return 0, fmt.Errorf("local mode's Pulsar can take only a bookie (bookie-0 to bookie-%d): its broker and ZooKeeper are one standalone JVM, and %s would stop the whole system", bookies-1, t)
	case n >= bookies:
		return 0, fmt.Errorf("local mode started %d bookies, bookie-0 to bookie-%d; there is no bookie-%d", bookies, bookies-1, n)
	}
	return n, nil
}

// aimBookie names a fault's bookie anew from the first topic's current
// ensemble (bookie indexes; Options.aimBookie, tests only).
type aimBookie func(t v1alpha1.FaultTarget, ensemble []int) v1alpha1.FaultTarget

// pulsarProcs finds a bookie among a local Pulsar's separate bookies. At
// the fault's time it asks the broker which bookies the first topic's
// newest ledger writes to, and the record says whether the bookie is one
// of them: a bookie outside the ensemble takes nothing from the writes.
// restarted is told after a killed bookie is back (the run's pids change).
func pulsarProcs(p *localbrokers.Pulsar, topic string, aim aimBookie, restarted func()) findProc {
	return func(ctx context.Context, t v1alpha1.FaultTarget) (faultProc, error) {
		if p == nil || p.SeparateBookies() == 0 {
			return faultProc{}, errors.New("local mode injects Pulsar faults only into bookies it started as JVMs of their own (a run with spec.faults does)")
		}
		lctx, cancel := context.WithTimeout(ctx, leaderLookupTimeout)
		ens, ensErr := p.CurrentEnsemble(lctx, topic)
		cancel()
		in := ensembleIndexes(p, ens.Bookies)
		if aim != nil {
			if ensErr != nil {
				return faultProc{}, fmt.Errorf("reading the first topic's ensemble to aim the fault: %w", ensErr)
			}
			t = aim(t, in)
		}
		n, err := pulsarBookie(t, p.SeparateBookies())
		if err != nil {
			return faultProc{}, err
		}
		proc := p.BookieProcess(n)
		fp := faultProc{name: proc.Name, pid: proc.Pid, alive: func() bool { return !proc.Exited() },
			restart: func(ctx context.Context) (int, error) {
				np, err := p.RestartBookie(ctx, n, restartTimeout)
				if np == nil {
					return 0, err
				}
				if restarted != nil {
					restarted()
				}
				return np.Pid, err
			}}
		fp.resolved = fmt.Sprintf("bookie-%d (%s, pid %d; %s)", n, proc.Name, proc.Pid, ensembleNote(n, in, ens, ensErr))
		fp.watch = func(ctx context.Context) func() string { return watchEnsemble(ctx, p, topic) }
		return fp, nil
	}
}

// ensembleIndexes are the bookies of ids by their index in p; an id that
// is none of p's bookies is left out.
func ensembleIndexes(p *localbrokers.Pulsar, ids []string) []int {
	var in []int
	for i := range p.SeparateBookies() {
		if slices.Contains(ids, p.BookieID(i)) {
			in = append(in, i)
		}
	}
	return in
}

// ensembleNote says where bookie n stood against the first topic's ensemble
// at the fault's time. Pure.
func ensembleNote(n int, in []int, ens localbrokers.Ensemble, err error) string {
	if err != nil {
		return "the first topic's ensemble could not be read: " + err.Error()
	}
	names := bookieNames(in)
	where := "in"
	if !slices.Contains(in, n) {
		where = "not in"
	}
	return fmt.Sprintf("%s the ensemble of %s's ledger %d: %s", where, ens.Topic, ens.Ledger, strings.Join(names, ", "))
}

// ensembleWatchInterval is how often a bookie fault's watch reads the first
// topic's ensemble: a second places a change within the fault's 2 s
// intervals.
const ensembleWatchInterval = time.Second

// ensembleAt is one ensemble a watch saw, from when (since the fault).
type ensembleAt struct {
	at      time.Duration
	ledger  int64
	bookies []string
}

// watchEnsemble reads the first topic's ensemble every
// ensembleWatchInterval from a bookie fault until ctx ends (the run's
// end; the topics are deleted then and the reads fail, which ends
// nothing), and keeps each change: what the ensembles became is what a
// bookie's loss did to the writes. The returned report waits for the watch
// to end.
func watchEnsemble(ctx context.Context, p *localbrokers.Pulsar, topic string) func() string {
	since := time.Now()
	done := make(chan struct{})
	var seen []ensembleAt
	go func() {
		defer close(done)
		for {
			rctx, cancel := context.WithTimeout(ctx, ensembleWatchInterval*5)
			e, err := p.CurrentEnsemble(rctx, topic)
			cancel()
			if err == nil {
				names := bookieNames(ensembleIndexes(p, e.Bookies))
				if n := len(seen); n == 0 || seen[n-1].ledger != e.Ledger || !slices.Equal(seen[n-1].bookies, names) {
					seen = append(seen, ensembleAt{at: time.Since(since), ledger: e.Ledger, bookies: names})
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(ensembleWatchInterval):
			}
		}
	}()
	return func() string {
		<-done
		return describeEnsembles(topic, seen)
	}
}

// describeEnsembles says what a watch saw. Pure.
func describeEnsembles(topic string, seen []ensembleAt) string {
	if len(seen) == 0 {
		return "the ensemble of " + topic + " could not be read after the fault"
	}
	parts := make([]string, len(seen))
	for i, e := range seen {
		parts[i] = fmt.Sprintf("ledger %d on %s from +%.1f s", e.ledger, strings.Join(e.bookies, ", "), e.at.Seconds())
	}
	if len(seen) == 1 {
		return fmt.Sprintf("the ensemble of %s did not change after the fault: %s", topic, parts[0])
	}
	return fmt.Sprintf("the ensembles of %s after the fault: %s", topic, strings.Join(parts, "; "))
}

// bookieNames are bookie indexes as fault targets name them.
func bookieNames(in []int) []string {
	names := make([]string, len(in))
	for i, b := range in {
		names[i] = fmt.Sprintf("bookie-%d", b)
	}
	return names
}
