package localrun

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/localbrokers"
)

func TestPulsarBookie(t *testing.T) {
	for _, tc := range []struct {
		target v1alpha1.FaultTarget
		want   int
		err    string
	}{
		{"bookie-0", 0, ""},
		{"bookie-2", 2, ""},
		{"bookie-3", 0, "started 3 bookies, bookie-0 to bookie-2; there is no bookie-3"},
		{"broker-0", 0, "its broker and ZooKeeper are one standalone JVM"},
		{"zookeeper-0", 0, "can take only a bookie"},
		{"leader", 0, "only a bookie"},
	} {
		got, err := pulsarBookie(tc.target, 3)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want an error with %q", tc.target, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %d, %v; want bookie %d", tc.target, got, err, tc.want)
		}
	}
}

func TestPulsarFirstTopic(t *testing.T) {
	if got := pulsarFirstTopic("r1", 1); got != "streambench/sb-r1/topic-0" {
		t.Errorf("one partition: %s", got)
	}
	if got := pulsarFirstTopic("r1", 4); got != "streambench/sb-r1/topic-0-partition-0" {
		t.Errorf("four partitions: %s", got)
	}
}

func TestEnsembleNotes(t *testing.T) {
	ens := localbrokers.Ensemble{Topic: "t/n/x", Ledger: 5}
	if got := ensembleNote(1, []int{0, 1, 2}, ens, nil); got != "in the ensemble of t/n/x's ledger 5: bookie-0, bookie-1, bookie-2" {
		t.Errorf("in: %s", got)
	}
	if got := ensembleNote(3, []int{0, 1, 2}, ens, nil); !strings.HasPrefix(got, "not in the ensemble") {
		t.Errorf("not in: %s", got)
	}
	if got := ensembleNote(1, nil, ens, errors.New("404")); !strings.Contains(got, "could not be read: 404") {
		t.Errorf("unread: %s", got)
	}
	seen := []ensembleAt{
		{at: 0, ledger: 5, bookies: []string{"bookie-0", "bookie-1", "bookie-2"}},
		{at: 1200 * time.Millisecond, ledger: 5, bookies: []string{"bookie-1", "bookie-2", "bookie-3"}},
	}
	if got, want := describeEnsembles("t/n/x", seen), "the ensembles of t/n/x after the fault: ledger 5 on bookie-0, bookie-1, bookie-2 from +0.0 s; ledger 5 on bookie-1, bookie-2, bookie-3 from +1.2 s"; got != want {
		t.Errorf("changed:\n%s\nwant\n%s", got, want)
	}
	if got := describeEnsembles("t/n/x", seen[:1]); !strings.HasPrefix(got, "the ensemble of t/n/x did not change after the fault: ledger 5") {
		t.Errorf("unchanged: %s", got)
	}
	if got := describeEnsembles("t/n/x", nil); !strings.Contains(got, "could not be read") {
		t.Errorf("none: %s", got)
	}
}

// A fault's watch starts when it is injected, ends with the run, and its
// report closes the fault's message, after what the injection said.
func TestFaultInjectorWatch(t *testing.T) {
	ended := make(chan struct{})
	find := func(ctx context.Context, _ v1alpha1.FaultTarget) (faultProc, error) {
		return faultProc{name: "bookie-0", pid: 7, alive: func() bool { return true },
			watch: func(ctx context.Context) func() string {
				go func() { <-ctx.Done(); close(ended) }()
				return func() string { <-ended; return "what the watch saw" }
			}}, nil
	}
	fs := []v1alpha1.Fault{{Action: v1alpha1.FaultKill, Target: "bookie-0", At: ms(10)}}
	inj := startFaults(t.Context(), fs, 0, find, func(int, syscall.Signal) error { return nil }, t.Logf)
	inj.measureStarted(time.Now())
	time.Sleep(100 * time.Millisecond)
	got := inj.finish()
	if want := "bookie-0 was not restarted: it stayed down for the rest of the run; what the watch saw"; got[0].Message != want {
		t.Errorf("message %q, want %q", got[0].Message, want)
	}
}
