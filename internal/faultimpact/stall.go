package faultimpact

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"k8s.io/utils/ptr"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/results"
)

// The stall bar and the match window.
const (
	// StallFloorSeconds: a longest wait under a second is a slow send,
	// not writes that stopped; above it, a wait is a stall only when it
	// is also above RecoveredP99Factor times the pre-fault p99 (a run
	// whose healthy p99 is seconds has no stall at two seconds).
	StallFloorSeconds = 1.0
	// A setting of T seconds explains a stall of S seconds when
	// T - early <= S <= T + late, early = max(MatchEarlySeconds,
	// MatchFraction*T) and late = max(MatchLateSeconds, MatchFraction*T).
	// Early: a timeout runs from the victim's last sign of life
	// (a Kafka broker heartbeats every broker.heartbeat.interval.ms, 2 s
	// by default), which came before the fault. Late: after the timeout
	// the controller elects, the clients learn the new leader and send
	// again. The widths are what the experiment in
	// internal/localrun (TestRunKafkaKillLeader) needed,
	// with room for a loaded machine; see docs/methodology.md, "Why a
	// stall lasted what it lasted".
	MatchEarlySeconds = 2.5
	MatchLateSeconds  = 3.0
	MatchFraction     = 0.25
)

// Candidate is what a stall may be explained by: a broker setting in
// effect, or the fault's own length.
type Candidate struct {
	// Name is the setting's name, or what the length is ("the pause
	// itself").
	Name string
	// Value is as the brokers said it ("9000"); empty for a length.
	Value   string
	Seconds float64
	// Bounds says what the setting bounds, in words.
	Bounds string
}

// Candidates are the settings that are timeouts, in the order given.
func Candidates(settings []results.BrokerSetting) []Candidate {
	var out []Candidate
	for _, s := range settings {
		if s.Seconds != nil && *s.Seconds > 0 {
			out = append(out, Candidate{Name: s.Name, Value: s.Value, Seconds: *s.Seconds, Bounds: s.Bounds})
		}
	}
	return out
}

// OwnLength is the candidate of a fault that ends by itself (a Pause) or
// that the operator saw end (a killed pod back): the writes may have
// waited for exactly that. Nil when the fault did not clear.
func OwnLength(f v1alpha1.FaultStatus) *Candidate {
	if f.InjectedAt == nil || f.ClearedAt == nil {
		return nil
	}
	d := f.ClearedAt.Sub(f.InjectedAt.Time).Seconds()
	c := &Candidate{Seconds: d}
	switch f.Action {
	case v1alpha1.FaultPause:
		c.Name, c.Bounds = "the pause itself", "the stopped process answered nothing until SIGCONT"
	default:
		c.Name, c.Bounds = "the target's return", "the writes waited for the killed broker to come back"
	}
	return c
}

// Stalled says whether a longest wait is a stall: above
// StallFloorSeconds and above RecoveredP99Factor times the pre-fault
// p99 (when known).
func Stalled(longestWaitMs float64, preFaultP99Ms *float64) bool {
	if longestWaitMs < StallFloorSeconds*1000 {
		return false
	}
	return preFaultP99Ms == nil || longestWaitMs > RecoveredP99Factor**preFaultP99Ms
}

// Explain is the stall of a longest wait and the candidate it matches
// (the nearest of those whose window holds it; the others that hold it
// are said too, as one cause can have several faces: a killed KRaft
// broker restarted at once is back only when its old session expires, at
// the same moment the writes resume), or, when none does, the candidates
// that were weighed. Nil when the wait is no stall. Pure.
func Explain(longestWaitMs float64, preFaultP99Ms *float64, cands []Candidate) *v1alpha1.FaultStall {
	if !Stalled(longestWaitMs, preFaultP99Ms) {
		return nil
	}
	s := longestWaitMs / 1000
	st := &v1alpha1.FaultStall{Seconds: s}
	var match []Candidate
	for _, c := range cands {
		if matches(s, c.Seconds) {
			match = append(match, c)
		}
	}
	// The nearest first; a tie keeps the order given (settings before
	// the fault's own length).
	sort.SliceStable(match, func(i, j int) bool { return math.Abs(s-match[i].Seconds) < math.Abs(s-match[j].Seconds) })
	head := "writes stopped " + seconds(s)
	if len(match) > 0 {
		c := match[0]
		st.Setting, st.SettingSeconds = c.Name, ptr.To(c.Seconds)
		st.Explanation = fmt.Sprintf("%s: matches %s (%s)", head, c.text(), c.Bounds)
		if len(match) > 1 {
			var also []string
			for _, o := range match[1:] {
				also = append(also, o.text())
			}
			st.Explanation += "; " + strings.Join(also, " and ") + " within reach too"
		}
		return st
	}
	if len(cands) == 0 {
		st.Explanation = head + ": no broker setting was read to explain it"
		return st
	}
	byLength := append([]Candidate(nil), cands...)
	sort.SliceStable(byLength, func(i, j int) bool { return byLength[i].Seconds < byLength[j].Seconds })
	var weighed []string
	for _, c := range byLength {
		weighed = append(weighed, c.text())
	}
	st.Explanation = fmt.Sprintf("%s: matches none of %s", head, strings.Join(weighed, ", "))
	return st
}

// ExplainUnfinished is the stall of writes that had not resumed when the
// measurement ended, their last notResumedSeconds without an
// acknowledgement: it lasted at least that (or the longest answered wait,
// if longer), so a setting shorter than that explains nothing, and one
// longer may still have been running. Pure.
func ExplainUnfinished(longestWaitMs, notResumedSeconds float64, cands []Candidate) *v1alpha1.FaultStall {
	s := math.Max(longestWaitMs/1000, notResumedSeconds)
	st := &v1alpha1.FaultStall{Seconds: s, Unfinished: true}
	head := fmt.Sprintf("writes stopped and had not resumed when the measurement ended: no acknowledgement in its last %s", seconds(notResumedSeconds))
	var shorter, longer []string
	byLength := append([]Candidate(nil), cands...)
	sort.SliceStable(byLength, func(i, j int) bool { return byLength[i].Seconds < byLength[j].Seconds })
	for _, c := range byLength {
		if c.Seconds < s {
			shorter = append(shorter, c.text())
		} else {
			longer = append(longer, c.text())
		}
	}
	switch {
	case len(cands) == 0:
		st.Explanation = head + "; no broker setting was read to explain it"
	case len(longer) == 0:
		st.Explanation = fmt.Sprintf("%s, longer than every setting read (%s): nothing they bound held the writes", head, strings.Join(shorter, ", "))
	default:
		st.Explanation = fmt.Sprintf("%s; still within %s", head, strings.Join(longer, ", "))
		if len(shorter) > 0 {
			st.Explanation += fmt.Sprintf(", past %s", strings.Join(shorter, ", "))
		}
	}
	return st
}

func matches(stall, setting float64) bool {
	early := math.Max(MatchEarlySeconds, MatchFraction*setting)
	late := math.Max(MatchLateSeconds, MatchFraction*setting)
	return stall >= setting-early && stall <= setting+late
}

func (c Candidate) text() string {
	if c.Value == "" {
		return c.Name + " " + seconds(c.Seconds)
	}
	return c.Name + " " + c.Value + " (" + seconds(c.Seconds) + ")"
}

func seconds(s float64) string {
	return strconv.FormatFloat(math.Round(s*10)/10, 'f', -1, 64) + " s"
}
