package experiment

// What a stall measured and what it means: the acknowledgements'
// latency around the stall, the verdict, and the table.

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
)

// Latency is the publish latency of a set of messages.
type Latency struct {
	Count         int
	P50, P99, Max time.Duration
}

func latencyOf(acks []ack) Latency {
	if len(acks) == 0 {
		return Latency{}
	}
	ds := make([]time.Duration, len(acks))
	for i, a := range acks {
		ds[i] = a.acked.Sub(a.send)
	}
	slices.Sort(ds)
	at := func(q float64) time.Duration { return ds[min(len(ds)-1, int(q*float64(len(ds))))] }
	return Latency{Count: len(ds), P50: at(0.5), P99: at(0.99), Max: ds[len(ds)-1]}
}

func (l Latency) String() string {
	if l.Count == 0 {
		return "no acks"
	}
	return fmt.Sprintf("p50 %s, p99 %s, max %s (%d acks)", ms(l.P50), ms(l.P99), ms(l.Max), l.Count)
}

// StallResult is what one stall measured.
type StallResult struct {
	Cell     StallCell
	Version  string
	Settings string
	// Leader and Follower are the partition's leader and the stopped
	// follower (node ids); From and To the stall on the wall clock.
	Leader, Follower int32
	From, To         time.Time
	// ISR before the stall, during it (read Stall-1 s after it began), and
	// after it (once the follower caught up, or 10 s after the stall).
	ISRBefore, ISRDuring, ISRAfter []int32
	// Ensembles, for Pulsar, is the number of ensembles of each of the
	// topic's ledgers before the stall, during it (Stall-1 s after it
	// began) and a second after it: a ledger whose count grew replaced a
	// bookie (ensembles.go). Follower is then the stalled bookie's index.
	EnsemblesBefore, EnsemblesDuring, EnsemblesAfter []int
	// Outside is the latency of the messages sent before the stall in the
	// measured phase; During of those sent during it.
	Outside, During Latency
	// Early is the messages sent in the stall's first half and
	// acknowledged; Held is how many of them were acknowledged only after
	// the follower continued (or after the ISR dropped it).
	Early, Held int
	// Chance is the share of the messages before the stall whose latency
	// was at least half the stall: how many of Early a busy machine alone
	// would hold that long.
	Chance float64
	// Resumed is the time from the stall's start to the first
	// acknowledgement of a message sent during it.
	Resumed time.Duration
	// Unacked counts messages sent during the stall without an ack (or
	// with an error) by the end of the run.
	Unacked int
	// LagMax is the bound after which the system stops waiting: Kafka's
	// replica.lag.time.max.ms, Pulsar's add timeout.
	LagMax time.Duration
}

// BrokersView is what the brokers did about the stalled replica: Kafka's
// ISR, Pulsar's ensembles, before / during / after the stall.
func (r StallResult) BrokersView() string {
	if r.Cell.System == v1alpha1.SystemPulsar {
		return fmt.Sprintf("bookie %d's journal; ensembles per ledger %v / %v / %v", r.Follower, r.EnsemblesBefore, r.EnsemblesDuring, r.EnsemblesAfter)
	}
	return fmt.Sprintf("follower %d of leader %d; ISR %v / %v / %v", r.Follower, r.Leader, r.ISRBefore, r.ISRDuring, r.ISRAfter)
}

// DroppedAfter is, for a stall past LagMax, how long the system waited
// for the stalled replica: the time to the first acknowledgement of a
// message sent during the stall, if that came before the stall ended and
// the brokers had dropped the replica by the read during the stall (Kafka:
// the ISR no longer held the follower; Pulsar: the topic's newest ledger
// had a new ensemble); ok false otherwise.
func (r StallResult) DroppedAfter() (time.Duration, bool) {
	if r.Resumed <= 0 || !r.From.Add(r.Resumed).Before(r.To) {
		return 0, false
	}
	if r.Cell.System == v1alpha1.SystemPulsar {
		// Pulsar: the newest ledger read during the stall has more
		// ensembles than it had before (or is a new ledger).
		b, d := r.EnsemblesBefore, r.EnsemblesDuring
		if len(b) == 0 || len(d) == 0 || len(d) == len(b) && d[len(d)-1] <= b[len(b)-1] {
			return 0, false
		}
		return r.Resumed, true
	}
	if r.ISRDuring == nil || slices.Contains(r.ISRDuring, r.Follower) {
		return 0, false
	}
	return r.Resumed, true
}

// Reading is what the acks did, in words, for the table.
func (r StallResult) Reading() string {
	if r.Cell.PastLag {
		d, ok := r.DroppedAfter()
		switch {
		case ok && r.Cell.System == v1alpha1.SystemPulsar:
			return fmt.Sprintf("held until the broker replaced the stalled bookie in the ensemble, %.1f s into the stall (bookkeeperClientTimeoutInSeconds %.0f)", d.Seconds(), r.LagMax.Seconds())
		case ok:
			return fmt.Sprintf("held until the leader dropped the stopped follower from the ISR, %.1f s into the stall (replica.lag.time.max.ms %d)", d.Seconds(), r.LagMax.Milliseconds())
		case r.Cell.System == v1alpha1.SystemPulsar:
			return "the stalled bookie was not replaced during the stall"
		}
		return "the follower was not dropped from the ISR during the stall"
	}
	v, err := r.Verdict()
	if err != nil {
		return "cannot tell"
	}
	return v.String()
}

// Waits says what the acknowledgements waited for, from the held share and
// coincidence; err when the machine was too slow to tell.
type Waits int

// The answers a stall gives.
const (
	WaitsUnknown Waits = iota
	// WaitsForStalled: the writes were held until the stopped replica
	// ran again (or was dropped from the ISR).
	WaitsForStalled
	// WaitsNotForStalled: the writes were acknowledged without it.
	WaitsNotForStalled
)

func (w Waits) String() string {
	switch w {
	case WaitsForStalled:
		return "waited for the stalled replica"
	case WaitsNotForStalled:
		return "did not wait for the stalled replica"
	}
	return "cannot tell"
}

// Verdict reads the stall: held ≥ syncedShare of the early messages is a
// wait; at most asyncShare, or chanceFactor times Chance, is none; a
// machine so slow that tooSlowToTell of the messages before the stall
// took half the stall cannot tell.
func (r StallResult) Verdict() (Waits, error) {
	if r.Early == 0 {
		return WaitsUnknown, fmt.Errorf("%s: no message sent in the first half of the stall was acknowledged", r.Cell.Name())
	}
	if r.Chance >= tooSlowToTell {
		return WaitsUnknown, fmt.Errorf("%s: %.0f %% of the messages before the stall took half the stall (%s) anyway: the machine is too slow to tell a held ack from a slow one",
			r.Cell.Name(), 100*r.Chance, r.Cell.Stall/2)
	}
	held := float64(r.Held) / float64(r.Early)
	switch {
	case held >= syncedShare:
		return WaitsForStalled, nil
	case held <= max(asyncShare, chanceFactor*r.Chance):
		return WaitsNotForStalled, nil
	}
	return WaitsUnknown, fmt.Errorf("%s: %d of %d messages sent early in the stall were held until it ended, against %.0f %% by chance: neither all nor none",
		r.Cell.Name(), r.Held, r.Early, 100*r.Chance)
}

// readStall counts, of acks, what StallResult reports about the stall
// [from, to] that began Before into the measured phase starting at
// measureFrom. sent counts every message sent during the stall, acked or
// not.
func readStall(acks []ack, sent int, measureFrom, from, to time.Time) StallResult {
	var r StallResult
	half := to.Sub(from) / 2
	var outside, during []ack
	slow := 0
	for _, a := range acks {
		switch {
		case !a.send.Before(measureFrom) && a.send.Before(from):
			outside = append(outside, a)
			if a.acked.Sub(a.send) >= half {
				slow++
			}
		case !a.send.Before(from) && a.send.Before(to):
			during = append(during, a)
			if d := a.acked.Sub(from); r.Resumed == 0 || d < r.Resumed {
				r.Resumed = d
			}
			if a.send.Before(from.Add(half)) {
				r.Early++
				if !a.acked.Before(to) {
					r.Held++
				}
			}
		}
	}
	r.Outside, r.During = latencyOf(outside), latencyOf(during)
	if len(outside) > 0 {
		r.Chance = float64(slow) / float64(len(outside))
	}
	r.From, r.To = from, to
	r.Unacked = max(0, sent-len(during))
	return r
}

// StallTable is the results as the Markdown table of docs/methodology.md.
func StallTable(rs []StallResult) string {
	var b strings.Builder
	b.WriteString("| system | level | settings | stall (s) | what was stalled; Kafka's ISR, Pulsar's ensembles per ledger, before / during / after | outside the stall: p50 / p99 / max (ms) | during: p50 / p99 / max (ms) | early messages held | first ack after (s) | the acks |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		isr := r.BrokersView()
		fmt.Fprintf(&b, "| %s %s | %d | %s | %.1f | %s | %s / %s / %s | %s / %s / %s | %d of %d (%.0f %% by chance) | %.2f | %s |\n",
			title(r.Cell.System), r.Version, r.Cell.Level, r.Settings, r.To.Sub(r.From).Seconds(), isr,
			trimMs(r.Outside.P50), trimMs(r.Outside.P99), trimMs(r.Outside.Max),
			trimMs(r.During.P50), trimMs(r.During.P99), trimMs(r.During.Max),
			r.Held, r.Early, 100*r.Chance, r.Resumed.Seconds(), r.Reading())
	}
	return b.String()
}
