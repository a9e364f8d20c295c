package experiment

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/durability"
	"github.com/streambench/streambench-operator/internal/localbrokers"
)

// TestAcksWaitFor is the replica-stall experiment (docs/methodology.md).
// On three real Kafka nodes, with one follower stopped for half of
// replica.lag.time.max.ms, writes at acks=all (levels 1 and 2, with
// min.insync.replicas 2) must be held until it runs again — the leader
// waits for every in-sync replica, not for a majority — while it stays in
// the ISR; writes at acks=1 (levels 3 and 4) must not be held. Stopped for
// twice that bound, the follower must be dropped from the ISR and the
// held writes acknowledged before it runs again, no sooner than the bound.
// On Pulsar standalones with three bookies, with one bookie's journal
// writes and syncs stalled, writes with ack quorum 2 of 3 (levels 1 and 2,
// the bookies syncing their journal before an answer and not) and 1
// (level 3) must not be held, and writes with ack quorum 3 must be; the
// ledger keeps its ensemble (the broker still writes to the stalled bookie,
// as Kafka's leader keeps the follower in the ISR). Stalled for twice the
// broker's add timeout, the bookie must be replaced by the spare (a new
// ensemble) and the held writes acknowledged before it answers again, no
// sooner than the timeout. The verdicts
// count which messages were held until the stall ended, against how many
// took as long anyway, so a busy machine cannot make them. About 5
// minutes of wall time on 2 cores.
func TestAcksWaitFor(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	rs, err := RunStalls(ctx, StallOptions{Dir: t.TempDir(), Log: t.Logf, PulsarJVM: localbrokers.PulsarTestJVM})
	t.Logf("%d stalls in %s; load %s\n%s", len(rs), time.Since(start).Round(time.Second), uptime(), StallTable(rs))
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != len((StallOptions{}).StallCells()) {
		t.Fatalf("%d results for %d cells", len(rs), len((StallOptions{}).StallCells()))
	}
	// What runs report (internal/durability/ackwait.go) must name the
	// versions this measured.
	for _, r := range rs {
		if !slices.Contains(durability.StallVersions(r.Cell.System), r.Version) {
			t.Errorf("the replica-stall experiment ran %s %s, but internal/durability lists %v; add it to stallVersions",
				r.Cell.System, r.Version, durability.StallVersions(r.Cell.System))
		}
	}
	want := func(c StallCell) Waits {
		if c.System == v1alpha1.SystemKafka && c.Level <= v1alpha1.Level2 || c.AckAll {
			return WaitsForStalled
		}
		return WaitsNotForStalled
	}
	for _, r := range rs {
		t.Run(r.Cell.Name(), func(t *testing.T) {
			if r.Cell.System == v1alpha1.SystemKafka && (r.Leader == r.Follower || !slices.Contains(r.ISRBefore, r.Follower) || len(r.ISRBefore) != 3) {
				t.Fatalf("leader %d, stopped follower %d, ISR before the stall %v: want a follower in an ISR of 3", r.Leader, r.Follower, r.ISRBefore)
			}
			if r.Early < 100 {
				t.Errorf("only %d messages sent early in the stall were acknowledged; a verdict on so few says little", r.Early)
			}
			if r.Cell.PastLag {
				d, ok := r.DroppedAfter()
				if !ok {
					t.Fatalf("stalled for %s, past the bound %s: %s, first ack %s into it; want the replica dropped (Kafka: from the ISR; Pulsar: from the ensemble) and the acks resumed before it ran again",
						r.Cell.Stall, r.LagMax, r.BrokersView(), r.Resumed)
				}
				// Acks resume once the leader drops the follower, which
				// it does at a check every LagMax/2 after LagMax without a
				// fetch; Pulsar's client checks for timed-out adds every
				// half timeout too: a busy machine can only make it later.
				if d < r.LagMax*9/10 {
					t.Errorf("acks resumed %s into the stall, before the bound %s: the system did not wait for the stalled replica (%s)", d, r.LagMax, r.BrokersView())
				}
				return
			}
			v, err := r.Verdict()
			if err != nil {
				t.Fatal(err)
			}
			if v != want(r.Cell) {
				t.Errorf("level %d (%s): the acks %s (%d of %d early messages held, %.0f %% by chance); want: %s", r.Cell.Level, r.Settings, v, r.Held, r.Early, 100*r.Chance, want(r.Cell))
			}
			// The brokers' view: a stall of half the bound leaves the
			// follower in the ISR, which is why acks=all waits for it.
			if r.ISRDuring != nil && !slices.Contains(r.ISRDuring, r.Follower) {
				t.Errorf("ISR during a stall of %s: %v, without the stopped follower %d", r.Cell.Stall, r.ISRDuring, r.Follower)
			}
			// Pulsar's: a stall far below the client's add timeout (30
			// s) replaces no bookie, so ack quorum 3 waits for it.
			if r.Cell.System == v1alpha1.SystemPulsar {
				if r.EnsemblesBefore == nil || r.EnsemblesDuring == nil {
					t.Errorf("the topic's ensembles were not read (before %v, during %v)", r.EnsemblesBefore, r.EnsemblesDuring)
				} else if !slices.Equal(r.EnsemblesDuring, r.EnsemblesBefore) {
					t.Errorf("ensembles per ledger %v before a stall of %s, %v during it: the broker replaced the stalled bookie", r.EnsemblesBefore, r.Cell.Stall, r.EnsemblesDuring)
				}
			}
		})
	}
}

// TestParseEnsembles: the ensembles of each ledger, from internal stats as
// Pulsar serves them (the metadata string is BookKeeper's).
func TestParseEnsembles(t *testing.T) {
	const one = `LedgerMetadata{formatVersion=3, ensembleSize=3, writeQuorumSize=3, ackQuorumSize=2, state=OPEN, digestType=CRC32C, password=OMITTED, ensembles={0=[127.0.0.1:3181, 127.0.0.1:3182, 127.0.0.1:3183]}, customMetadata={component=base64:bWFuYWdlZC1sZWRnZXI=}}`
	const two = `LedgerMetadata{formatVersion=3, ensembleSize=3, writeQuorumSize=3, ackQuorumSize=3, state=CLOSED, length=9, lastEntryId=200, digestType=CRC32C, password=OMITTED, ensembles={0=[127.0.0.1:3181, 127.0.0.1:3182, 127.0.0.1:3183], 120=[127.0.0.1:3181, 127.0.0.1:3182, 127.0.0.1:3184]}, customMetadata={}}`
	stats := func(ms ...string) []byte {
		var ls []string
		for i, m := range ms {
			ls = append(ls, fmt.Sprintf(`{"ledgerId":%d,"entries":0,"size":0,"offloaded":false,"metadata":%q,"underReplicated":false}`, i+7, m))
		}
		return []byte(`{"entriesAddedCounter":5,"ledgers":[` + strings.Join(ls, ",") + `],"cursors":{}}`)
	}
	for _, tc := range []struct {
		name    string
		stats   []byte
		want    []int
		current string
		err     string
	}{
		{"one ensemble", stats(one), []int{1}, "3183", ""},
		{"a bookie replaced in the older ledger", stats(two, one), []int{2, 1}, "3183", ""},
		{"a bookie replaced in the newest ledger", stats(one, two), []int{1, 2}, "3184", ""},
		{"no metadata (read without metadata=true)", stats(""), nil, "", "metadata=true"},
		{"no ledgers", []byte(`{"ledgers":[]}`), nil, "", "no ledger"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, current, err := parseEnsembles(tc.stats)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("got %v (%v), want %v", got, err, tc.want)
			}
			// The newest ledger's newest ensemble is the one written to.
			if want := []string{"127.0.0.1:3181", "127.0.0.1:3182", "127.0.0.1:" + tc.current}; !slices.Equal(current, want) {
				t.Errorf("bookies written to %q, want %q", current, want)
			}
		})
	}
}
