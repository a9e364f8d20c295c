package coordinator

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/driver"
	pulsardriver "github.com/streambench/streambench-operator/internal/driver/pulsar"
	"github.com/streambench/streambench-operator/internal/localbrokers"
	"github.com/streambench/streambench-operator/internal/worker"
)

// TestPulsar runs every workload type against one real Pulsar standalone
// with 3 bookies, with an in-process coordinator and two workers over HTTP.
func TestPulsar(t *testing.T) {
	ctx := context.Background()
	eff := level2(t, v1alpha1.SystemPulsar)
	p, err := localbrokers.StartPulsar(ctx, localbrokers.PulsarOptions{
		BrokerConfig: eff.Pulsar.Broker, BookieConfig: eff.Pulsar.Bookie, Log: t.Logf, JVM: localbrokers.PulsarTestJVM,
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
	t.Run("stopped-while-creating-topics", func(t *testing.T) {
		runID := fmt.Sprintf("pcut%d", time.Now().UnixNano()%1e9)
		stopWhileCreatingTopics(t, urls, cfg, runID, func() []string { return namespaceTopics(t, p.AdminURL(), runID) })
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
		// No broker-side cap here (the Kafka test proves the search stops
		// at a real cap); the search is capped at 3,000 msg/s so it ends
		// quickly on a 2-core machine, and must find a rate it held. How
		// high that is depends on how busy the machine is (a loaded one
		// holds less than the initial 750), so no floor is asserted.
		wl := shortWorkload("max-rate", 0, 4)
		res := runCase(t, urls, cfg, wl, Options{RateSearch: RateSearchOptions{
			Period: 2 * time.Second,
			Config: MaxRateConfig{Initial: 750, MaxRate: 3000, Tolerance: 0.1, ConfirmPeriods: 2, MaxPeriods: 30, Hold: 4 * time.Second},
		}})
		rs := res.RateSearch
		if rs == nil || rs.RateMsgPerSec <= 0 || rs.LowMsgPerSec <= 0 || rs.RateMsgPerSec > 3000 {
			t.Fatalf("rate search %+v: want a rate it held, at most the 3,000 msg/s cap", rs)
		}
		t.Logf("rate search on Pulsar found %.0f msg/s (bracket %.0f..%.0f, converged %v) in %d steps", rs.RateMsgPerSec, rs.LowMsgPerSec, rs.HighMsgPerSec, rs.Converged, len(rs.Steps))
		if res.MeasuredRate != rs.RateMsgPerSec {
			t.Errorf("measured at %.0f msg/s, the search found %.0f", res.MeasuredRate, rs.RateMsgPerSec)
		}
	})
}

// namespaceTopics lists the topics, partitioned or not, in the run's
// namespace, through the admin REST API; none when the namespace is gone.
func namespaceTopics(t *testing.T, adminURL, runID string) []string {
	t.Helper()
	var out []string
	for _, suffix := range []string{"", "/partitioned"} {
		resp, err := http.Get(adminURL + "/admin/v2/persistent/" + pulsardriver.Namespace(runID) + suffix)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		switch resp.StatusCode {
		case http.StatusOK:
			err = json.NewDecoder(resp.Body).Decode(&names)
		case http.StatusNotFound:
		default:
			err = fmt.Errorf("listing the topics of %s: %s", pulsardriver.Namespace(runID), resp.Status)
		}
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, names...)
	}
	return out
}
