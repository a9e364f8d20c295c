package coordinator

import (
	"context"

	"github.com/streambench/streambench-operator/internal/protocol"
	"github.com/streambench/streambench-operator/internal/stats"
)

// setRate tells every producer worker its share of total.
func (c *coordinator) setRate(ctx context.Context, total float64) error {
	rates := c.plan.WorkerRates(total)
	return each(c.plan.ProducerWorkers, func(i int) error {
		return c.clients[i].post(ctx, protocol.PathAdjustRate, protocol.AdjustRateRequest{RatePerSec: rates[i]}, nil, callOpt{idempotent: true})
	})
}

// setPhase starts a phase on every worker at (nearly) the same time.
func (c *coordinator) setPhase(ctx context.Context, p stats.Phase) error {
	c.logf("phase %s", p)
	err := each(c.all(), func(i int) error {
		return c.clients[i].post(ctx, protocol.PathPhase, protocol.PhaseRequest{Phase: string(p)}, nil, callOpt{})
	})
	// Every worker closed its interval and restarted its ticker.
	c.kickCollector()
	return err
}

func (c *coordinator) pause(ctx context.Context, pause, catchUpOnly bool) error {
	path := protocol.PathResumeConsumers
	if pause {
		path = protocol.PathPauseConsumers
	}
	return each(c.plan.ConsumerWorkers, func(i int) error {
		return c.clients[i].post(ctx, path, protocol.PauseRequest{CatchUpOnly: catchUpOnly}, nil, callOpt{idempotent: true})
	})
}
