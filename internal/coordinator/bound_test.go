package coordinator

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/internal/driver"
	"github.com/streambench/streambench-operator/internal/stats"
)

func TestCountPoll(t *testing.T) {
	for _, c := range []struct {
		name     string
		left     int64
		rate     float64
		untilEnd time.Duration
		want     time.Duration
	}{
		{"no rate seen yet: the first poll", 1000, 0, time.Minute, firstCountPoll},
		{"far from the count: at most a second", 1_000_000, 1000, time.Minute, maxCountPoll},
		{"half the rest at the rate seen", 100, 1000, time.Minute, 50 * time.Millisecond},
		{"close to the count: at least the minimum", 1, 100_000, time.Minute, minCountPoll},
		{"never past the duration's end", 1_000_000, 1000, 30 * time.Millisecond, 30 * time.Millisecond},
		{"the duration over: at once", 1_000_000, 1000, -time.Second, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := countPoll(c.left, c.rate, c.untilEnd); got != c.want {
				t.Errorf("countPoll(%d, %v, %v) = %v, want %v", c.left, c.rate, c.untilEnd, got, c.want)
			}
		})
	}
}

// checkMaxMessages runs a produce-and-consume workload whose duration (a
// minute) is far longer than its record count takes at its rate (6,000
// messages at 2,000 msg/s: 3 s): the count must end the measured phase,
// with at least that many messages acknowledged in it, and the notes must
// say the count ended it. Run against real brokers (kafka_test.go).
func checkMaxMessages(t *testing.T, urls []string, cfg driver.Config) {
	t.Helper()
	const bound = 6000
	wl := shortWorkload("max-messages", 2000, 60)
	wl.WarmupDurationMinutes = f64(0)
	res := runCase(t, urls, cfg, wl, Options{MaxMessages: bound})
	m := stats.Aggregate(res.Snapshots, stats.PhaseMeasure)
	if m.Producer.Acked < bound {
		t.Errorf("the measured phase acknowledged %d messages, want at least the bound %d", m.Producer.Acked, bound)
	}
	// The count ends the phase in about 3 s; the workload's minute, had
	// it ended it, would be its whole length.
	if from, to, ok := res.MeasuredWindow(); !ok || to.Sub(from) >= time.Minute {
		t.Errorf("the measured phase lasted %s: the record count did not end it before the workload's minute", to.Sub(from))
	}
	if !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "ended by its record count") }) {
		t.Errorf("no note says the record count ended the measured phase: %q", res.Notes)
	}
	in := res.ResultsInput("r", "", &cfg.Durability)
	if !slices.ContainsFunc(in.Notes, func(n string) bool { return strings.Contains(n, "ended by its record count") }) {
		t.Errorf("the results' notes (summary.json) do not say the record count ended the measured phase: %q", in.Notes)
	}
	t.Logf("bound %d: %d acknowledged in the measured phase, %d in the run; notes %q", bound, m.Producer.Acked, res.Accounting.Acked, res.Notes)
}

// A count the duration ends first: the notes say the bound was not reached.
func checkMaxMessagesNotReached(t *testing.T, urls []string, cfg driver.Config) {
	t.Helper()
	wl := shortWorkload("max-messages-not-reached", 500, 3)
	wl.WarmupDurationMinutes = f64(0)
	wl.SubscriptionsPerTopic = i32(0)
	res := runCase(t, urls, cfg, wl, Options{MaxMessages: 1_000_000_000})
	if !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "short of the record-count bound") }) {
		t.Errorf("no note says the duration ended the measured phase before the record count: %q", res.Notes)
	}
}
