package main

import (
	"log"
	"sync"
	"time"

	"github.com/streambench/streambench-operator/internal/coordinator"
	"github.com/streambench/streambench-operator/internal/results"
)

// finalWriteTimeout bounds one write of the results ConfigMap: building it
// (thinning a long run's series to fit 1 MiB) and one create or update.
// internal/provision/workers sizes the coordinator's termination grace
// period from it and the cleanup's bound.
const finalWriteTimeout = time.Minute

// checkpointer writes the coordinator's results so far, marked partial,
// once per snapshot interval, in the background: a write still under way
// when the next interval ends makes that interval's write skipped, so a
// slow API server never holds up the stats collector. A nil checkpointer
// writes nothing.
type checkpointer struct {
	write func(results.Input) error
	input func(*coordinator.Result) results.Input

	mu      sync.Mutex
	busy    bool
	stopped bool
	wg      sync.WaitGroup
}

func (c *checkpointer) checkpoint(r *coordinator.Result) {
	if c == nil || len(r.Snapshots) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.busy || c.stopped {
		return
	}
	c.busy = true
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		if err := c.write(c.input(r)); err != nil {
			log.Printf("writing the results so far: %v (tried again at the next interval)", err)
		}
		c.mu.Lock()
		c.busy = false
		c.mu.Unlock()
	}()
}

// stop waits for a write under way and refuses any later one, so the
// final results are never overwritten by partial ones.
func (c *checkpointer) stop() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.stopped = true
	c.mu.Unlock()
	c.wg.Wait()
}
