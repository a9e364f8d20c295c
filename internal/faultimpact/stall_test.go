package faultimpact

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/results"
)

func TestExplain(t *testing.T) {
	session := Candidate{Name: "broker.session.timeout.ms", Value: "9000", Seconds: 9, Bounds: "fencing"}
	lag := Candidate{Name: "replica.lag.time.max.ms", Value: "30000", Seconds: 30, Bounds: "ISR"}
	pause := Candidate{Name: "the pause itself", Seconds: 4, Bounds: "SIGSTOP"}
	kafka := []Candidate{session, lag}
	for _, tc := range []struct {
		name    string
		waitMs  float64
		preP99  *float64
		cands   []Candidate
		setting string // "" with stall: none matches; "-": no stall
		text    string
	}{
		{"below a second is no stall", 900, nil, kafka, "-", ""},
		{"under twice the pre-fault p99 is no stall", 3000, ptr.To(1600.0), kafka, "-", ""},
		{"a leader kill at Kafka's defaults (seen: 10.3 s)", 10297, ptr.To(81.0), kafka, "broker.session.timeout.ms",
			"writes stopped 10.3 s: matches broker.session.timeout.ms 9000 (9 s) (fencing)"},
		{"up to 2.5 s before the setting (the last heartbeat came before the kill)", 6600, nil, kafka, "broker.session.timeout.ms", ""},
		{"more than 2.5 s before it matches nothing", 6400, nil, kafka, "", "writes stopped 6.4 s: matches none of broker.session.timeout.ms 9000 (9 s), replica.lag.time.max.ms 30000 (30 s)"},
		{"up to 3 s after it", 12000, nil, kafka, "broker.session.timeout.ms", ""},
		{"more than 3 s after it matches nothing", 12100, nil, kafka, "", ""},
		{"a quarter of a long setting either way", 23000, nil, kafka, "replica.lag.time.max.ms", ""},
		{"the nearest of two that match, the other said", 4200, nil, []Candidate{{Name: "broker.session.timeout.ms", Value: "6000", Seconds: 6}, pause}, "the pause itself",
			"writes stopped 4.2 s: matches the pause itself 4 s (SIGSTOP); broker.session.timeout.ms 6000 (6 s) within reach too"},
		{"only one of two in reach", 4200, nil, []Candidate{session, pause}, "the pause itself", "writes stopped 4.2 s: matches the pause itself 4 s (SIGSTOP)"},
		{"one alone", 4200, nil, []Candidate{pause}, "the pause itself",
			"writes stopped 4.2 s: matches the pause itself 4 s (SIGSTOP)"},
		{"nothing read", 5000, nil, nil, "", "writes stopped 5 s: no broker setting was read to explain it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := Explain(tc.waitMs, tc.preP99, tc.cands)
			if tc.setting == "-" {
				if st != nil {
					t.Fatalf("stall %+v, want none", st)
				}
				return
			}
			if st == nil {
				t.Fatal("no stall")
			}
			if st.Setting != tc.setting || st.Seconds != tc.waitMs/1000 {
				t.Errorf("stall %+v: want %g s matched to %q", st, tc.waitMs/1000, tc.setting)
			}
			if (st.SettingSeconds != nil) != (tc.setting != "") {
				t.Errorf("settingSeconds %v with setting %q", st.SettingSeconds, st.Setting)
			}
			if tc.text != "" && st.Explanation != tc.text {
				t.Errorf("explanation %q, want %q", st.Explanation, tc.text)
			}
		})
	}
}

func TestExplainStall(t *testing.T) {
	at := metav1.NewMicroTime(time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC))
	back := metav1.NewMicroTime(at.Add(4 * time.Second))
	settings := []results.BrokerSetting{
		{Name: "broker.session.timeout.ms", Value: "9000", Seconds: ptr.To(9.0), Bounds: "fencing"},
		{Name: "unclean.leader.election.enable", Value: "false", Bounds: "not a length, never a candidate"},
	}
	f := v1alpha1.FaultStatus{Action: v1alpha1.FaultPause, Injected: true, InjectedAt: &at, ClearedAt: &back,
		Impact: &v1alpha1.FaultImpact{LongestWaitMs: ptr.To(3900.0), PreFaultP99Ms: ptr.To(100.0)}}
	ExplainStall(&f, settings)
	if st := f.Impact.Stall; st == nil || st.Setting != "the pause itself" || !strings.Contains(st.Explanation, "the pause itself 4 s") {
		t.Errorf("a 4 s pause's 3.9 s stall: %+v, want it explained by the pause", st)
	}
	f.Impact.LongestWaitMs = ptr.To(9500.0)
	ExplainStall(&f, settings)
	if st := f.Impact.Stall; st == nil || st.Setting != "broker.session.timeout.ms" {
		t.Errorf("a 9.5 s stall: %+v, want broker.session.timeout.ms", st)
	}
	kill := v1alpha1.FaultStatus{Action: v1alpha1.FaultKill, Injected: true, InjectedAt: &at,
		Impact: &v1alpha1.FaultImpact{LongestWaitMs: ptr.To(33000.0)}}
	ExplainStall(&kill, settings)
	if st := kill.Impact.Stall; st == nil || st.Setting != "" || !strings.Contains(st.Explanation, "matches none of broker.session.timeout.ms 9000 (9 s)") {
		t.Errorf("a 33 s stall of a kill never cleared: %+v, want nothing matched, the timeout weighed", st)
	}
	none := v1alpha1.FaultStatus{Impact: &v1alpha1.FaultImpact{}}
	ExplainStall(&none, settings)
	if none.Impact.Stall != nil {
		t.Error("an impact without a longest wait has a stall")
	}
}

// Writes that had not resumed when the measurement ended stalled at least
// as long as they went unanswered: a setting shorter than that explains
// nothing, a longer one may still have been running.
func TestExplainUnfinished(t *testing.T) {
	bk := Candidate{Name: "bookkeeperClientTimeoutInSeconds", Value: "30", Seconds: 30}
	zk := Candidate{Name: "metadataStoreSessionTimeoutMillis", Value: "5000", Seconds: 5}
	tests := []struct {
		name              string
		longestMs, silent float64
		cands             []Candidate
		seconds           float64
		text              string
	}{
		{"within a longer timeout", 9748, 14, []Candidate{bk, zk}, 14,
			"writes stopped and had not resumed when the measurement ended: no acknowledgement in its last 14 s; still within bookkeeperClientTimeoutInSeconds 30 (30 s), past metadataStoreSessionTimeoutMillis 5000 (5 s)"},
		// The longest answered wait, when longer, is the stall's bound.
		{"past every timeout", 40000, 14, []Candidate{bk, zk}, 40,
			"writes stopped and had not resumed when the measurement ended: no acknowledgement in its last 14 s, longer than every setting read (metadataStoreSessionTimeoutMillis 5000 (5 s), bookkeeperClientTimeoutInSeconds 30 (30 s)): nothing they bound held the writes"},
		{"nothing read", 0, 20, nil, 20,
			"writes stopped and had not resumed when the measurement ended: no acknowledgement in its last 20 s; no broker setting was read to explain it"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := ExplainUnfinished(tc.longestMs, tc.silent, tc.cands)
			if !st.Unfinished || st.Setting != "" || st.Seconds != tc.seconds || st.Explanation != tc.text {
				t.Errorf("ExplainUnfinished = %+v\nwant seconds %g, unfinished, no setting, %q", st, tc.seconds, tc.text)
			}
		})
	}
	// ExplainStall takes this path for an impact whose writes never
	// resumed, even with no answered wait at all.
	f := v1alpha1.FaultStatus{Action: v1alpha1.FaultKill, Injected: true,
		Impact: &v1alpha1.FaultImpact{NotResumedSeconds: ptr.To(20.0)}}
	ExplainStall(&f, nil)
	if st := f.Impact.Stall; st == nil || !st.Unfinished || st.Seconds != 20 {
		t.Errorf("stall %+v: want an unfinished 20 s stall", st)
	}
}
