package coordinator

import (
	"context"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/localbrokers"
	"github.com/streambench/streambench-operator/internal/worker"
)

// TestPulsar runs every workload type against one real Pulsar standalone
// with 3 bookies, with an in-process coordinator and two workers over HTTP.
func TestPulsar(t *testing.T) {
	ctx := context.Background()
	eff := level2(t, v1alpha1.SystemPulsar)
	p, err := localbrokers.StartPulsar(ctx, localbrokers.PulsarOptions{
		BrokerConfig: eff.Pulsar.Broker, BookieConfig: eff.Pulsar.Bookie, Log: t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Stop(); err != nil {
			t.Errorf("stopping Pulsar: %v", err)
		}
	})
	urls := startWorkers(t, 2, worker.DefaultDrivers())
	cfg := driver.Config{System: v1alpha1.SystemPulsar, Brokers: v1alpha1.BrokerEndpoints{ServiceURL: p.ServiceURL(), AdminURL: p.AdminURL()}, Durability: eff, RunID: "p"}

	t.Run("fixed-rate", func(t *testing.T) {
		runCase(t, urls, cfg, fixedRateWorkload(), Options{})
	})
	t.Run("backlog", func(t *testing.T) {
		res := runCase(t, urls, cfg, backlogWorkload(), Options{})
		checkBacklog(t, res, false)
	})
	t.Run("mixed", func(t *testing.T) {
		res := runCase(t, urls, cfg, mixedWorkload(), Options{})
		checkBacklog(t, res, true)
	})
	t.Run("max-rate", func(t *testing.T) {
		// No broker-side cap here (the Kafka test proves convergence on a
		// known capacity); the search is capped at 3,000 msg/s so it ends
		// quickly on a 2-core machine, and must find a rate it held.
		wl := shortWorkload("max-rate", 0, 4)
		res := runCase(t, urls, cfg, wl, Options{RateSearch: RateSearchOptions{
			Period: 2 * time.Second,
			Config: MaxRateConfig{Initial: 750, MaxRate: 3000, Tolerance: 0.1, ConfirmPeriods: 2, MaxPeriods: 30},
		}})
		rs := res.RateSearch
		if rs == nil || rs.RateMsgPerSec < 750 || rs.LowMsgPerSec <= 0 {
			t.Fatalf("rate search %+v: want a held rate of at least the initial 750 msg/s", rs)
		}
		if res.MeasuredRate != rs.RateMsgPerSec {
			t.Errorf("measured at %.0f msg/s, the search found %.0f", res.MeasuredRate, rs.RateMsgPerSec)
		}
	})
}
