package localrun

// Ctrl-C and SIGTERM: the first stops the run and keeps what was
// measured, the second kills the brokers' JVMs.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// signals is what the run's signal handler reaches: the first signal
// cancels the run, the second kills the brokers started so far and closes
// killed.
type signals struct {
	mu      sync.Mutex
	brokers *brokers
	killed  chan struct{}
	stop    func()
}

func watchSignals(given <-chan os.Signal, cancel context.CancelCauseFunc, say func(string, ...any)) *signals {
	s := &signals{killed: make(chan struct{})}
	s.stop = handleSignals(given, func(n int, sig os.Signal) {
		if n == 1 {
			say("%s: stopping the run, then the brokers (press Ctrl-C again to kill the brokers at once)", sig)
			cancel(ErrInterrupted)
			return
		}
		s.mu.Lock()
		cur := s.brokers
		s.mu.Unlock()
		say("%s again: killing the broker JVMs (pids %v)", sig, cur.Pids())
		if err := cur.kill(); err != nil {
			say("%v", err)
		}
		select {
		case <-s.killed:
		default:
			close(s.killed)
		}
	})
	return s
}

func (s *signals) brokersStarted(b *brokers) {
	s.mu.Lock()
	s.brokers = b
	s.mu.Unlock()
}

// interrupted names a signal as the cause of an error it caused.
func interrupted(ctx context.Context, err error) error {
	if err != nil && errors.Is(context.Cause(ctx), ErrInterrupted) {
		return fmt.Errorf("%w: %v", ErrInterrupted, err)
	}
	return err
}

// handleSignals calls on for every SIGINT or SIGTERM (or every value of
// the given channel) with its count, until the returned stop is called.
// signal.NotifyContext would only see the first: the second Ctrl-C must
// reach us too, or it would be swallowed while the brokers shut down.
func handleSignals(given <-chan os.Signal, on func(n int, s os.Signal)) (stop func()) {
	ch := given
	var own chan os.Signal
	if ch == nil {
		own = make(chan os.Signal, 2)
		signal.Notify(own, os.Interrupt, syscall.SIGTERM)
		ch = own
	}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		n := 0
		for {
			select {
			case <-quit:
				return
			case s := <-ch:
				n++
				on(n, s)
			}
		}
	}()
	return func() {
		if own != nil {
			signal.Stop(own)
		}
		close(quit)
		wg.Wait()
	}
}
