package main

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/changepoint"
	"github.com/streambench/streambench-operator/internal/history"
	"github.com/streambench/streambench-operator/internal/results"
)

// nights makes each repeat of a repeated run one night of a nightly
// series: the run's summary with the repeat's headline in place of the
// median, as if each repeat had been a run of its own, archived.
func nights(sum *results.Summary, name string) []history.Run {
	var out []history.Run
	for i, r := range sum.Repeats {
		s := *sum
		s.Results, s.Repeats, s.Intervals, s.CurveIntervals = r.Results, nil, nil, nil
		s.Run = fmt.Sprintf("%s-night-%02d", name, i+1)
		out = append(out, history.Run{Name: s.Run, Dir: s.Run, Start: r.Start, Summary: &s})
	}
	return out
}

// gateNight is what `streambench history --fail-on-regression` says on
// night m (0-based) of a series: the figures it fails on, with the runs
// up to and including m in the archive.
func gateNight(runs []history.Run, m int, minChange, alpha float64) []history.Failure {
	series := history.Analyze(history.Group(runs[:m+1]), changepoint.Options{PValue: alpha})
	return history.Gate(series, minChange, alpha)
}

// runGate is the -gate mode: the nightly gate's false-positive rate on
// real repeats of one configuration. Every repeat is a night; from the
// night that has first nights before it on, the gate judges the newest
// night against the series up to it, as the CronJob of
// config/samples/nightly does each night. The nights are all of one
// configuration, so every failed night is a false alarm.
func runGate(w io.Writer, dirs []string, minChange, alpha float64, first int) error {
	gated, failed := 0, 0
	perFigure := map[string]int{}
	for _, dir := range dirs {
		sum, err := readSummary(filepath.Join(dir, results.KeySummary))
		if err != nil {
			return err
		}
		runs := nights(sum, filepath.Base(dir))
		if len(runs) <= first {
			return fmt.Errorf("%s: %d repeats; the gate starts judging at night %d", dir, len(runs), first+1)
		}
		for m := first; m < len(runs); m++ {
			gated++
			fails := gateNight(runs, m, minChange, alpha)
			if len(fails) == 0 {
				continue
			}
			failed++
			var names []string
			for _, f := range fails {
				perFigure[f.Figure]++
				names = append(names, f.Figure)
			}
			fmt.Fprintf(w, "%s night %d: the gate fails on %s\n", filepath.Base(dir), m+1, strings.Join(names, ", "))
			for _, f := range fails {
				fmt.Fprintf(w, "    %s\n", f)
			}
		}
	}
	if gated == 0 {
		return fmt.Errorf("no night was gated")
	}
	fmt.Fprintf(w, "\nfalse alarms per figure (nights the gate failed on it, of %d gated):\n", gated)
	var names []string
	for n := range perFigure {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-28s %d\n", n, perFigure[n])
	}
	fmt.Fprintf(w, "\n%d of %d nights of one configuration failed the gate (%.1f %%), at --min-change %g and --p-value %g (over the figures); from night %d on\n",
		failed, gated, 100*float64(failed)/float64(gated), minChange, alpha, first+1)
	return nil
}

// latencyFigures are the history figures a planted slowdown moves: those
// in milliseconds.
var latencyFigures = func() map[string]bool {
	out := map[string]bool{}
	for _, f := range history.Figures {
		if f.Unit == "ms" {
			out[f.Name] = true
		}
	}
	return out
}()

// slowed is night r with every latency figure times factor: a planted
// step on real noise.
func slowed(r history.Run, factor float64) history.Run {
	s := *r.Summary
	scale := func(l *v1alpha1.LatencySummary) *v1alpha1.LatencySummary {
		if l == nil {
			return nil
		}
		c := *l
		c.Avg, c.P50, c.P99, c.P999, c.P9999, c.Max = c.Avg*factor, c.P50*factor, c.P99*factor, c.P999*factor, c.P9999*factor, c.Max*factor
		return &c
	}
	s.Results.PublishLatencyMs = *scale(&s.Results.PublishLatencyMs)
	s.Results.CorrectedLatencyMs = scale(s.Results.CorrectedLatencyMs)
	s.Results.EndToEndLatencyMs = scale(s.Results.EndToEndLatencyMs)
	r.Summary = &s
	return r
}

// changePoints is, per figure the runs have, the nights (0-based) of the
// change points Analyze finds in their series.
func changePoints(runs []history.Run, alpha float64) (map[string][]int, error) {
	series := history.Analyze(history.Group(runs), changepoint.Options{PValue: alpha})
	if len(series) != 1 {
		return nil, fmt.Errorf("the nights form %d series, not one: their configurations differ", len(series))
	}
	out := map[string][]int{}
	for _, t := range series[0].Tracks {
		if len(t.Values) > 0 {
			out[t.Figure.Name] = []int{}
		}
		for _, c := range t.Changes {
			out[t.Figure.Name] = append(out[t.Figure.Name], c.Run)
		}
	}
	return out, nil
}

// runChangePoints is the change points' side of -gate: on the whole
// stationary series of each directory every change point is a false one;
// with step > 0, the nights are cut into disjoint series of length
// nights, the second half of each slowed by step, and each latency
// figure's change point is looked for at the step (one night either side
// counts), and the gate on the first slowed night.
func runChangePoints(w io.Writer, dirs []string, alpha, minChange, step float64, length int) error {
	for _, dir := range dirs {
		sum, err := readSummary(filepath.Join(dir, results.KeySummary))
		if err != nil {
			return err
		}
		runs := nights(sum, filepath.Base(dir))
		cps, err := changePoints(runs, alpha)
		if err != nil {
			return err
		}
		total := 0
		for f, at := range cps {
			total += len(at)
			if len(at) == 0 {
				continue
			}
			fmt.Fprintf(w, "%s: a change point of %s at night(s) %v, in a series of one configuration\n", filepath.Base(dir), f, plusOne(at))
		}
		fmt.Fprintf(w, "%s: %d change points in %d nights of one configuration, %d figures (all false)\n", filepath.Base(dir), total, len(runs), len(cps))
		if step <= 0 {
			continue
		}
		half := length / 2
		trials, gateFailed := 0, 0
		found := map[string]int{}
		for start := 0; start+length <= len(runs); start += length {
			trials++
			var seg []history.Run
			for i, r := range runs[start : start+length] {
				if i >= half {
					r = slowed(r, step)
				}
				seg = append(seg, r)
			}
			cps, err := changePoints(seg, alpha)
			if err != nil {
				return err
			}
			for f, at := range cps {
				for _, a := range at {
					if latencyFigures[f] && a >= half-1 && a <= half+1 {
						found[f]++
						break
					}
				}
			}
			if len(gateNight(seg, half, minChange, alpha)) > 0 {
				gateFailed++
			}
		}
		if trials == 0 {
			return fmt.Errorf("%s: %d nights, fewer than one series of %d", dir, len(runs), length)
		}
		fmt.Fprintf(w, "\n%s, latency ×%g from night %d of each series of %d (%d series):\n", filepath.Base(dir), step, half+1, length, trials)
		var names []string
		for n := range latencyFigures {
			if _, ok := cps[n]; ok {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(w, "  %-28s change point at the step in %d of %d\n", n, found[n], trials)
		}
		fmt.Fprintf(w, "  the gate failed the first slowed night in %d of %d\n", gateFailed, trials)
	}
	return nil
}

func plusOne(at []int) []int {
	out := make([]int, len(at))
	for i, a := range at {
		out[i] = a + 1
	}
	return out
}
