package main

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

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
	fmt.Fprintf(w, "\n%d of %d nights of one configuration failed the gate (%.1f %%), at --min-change %g and p %g per figure; from night %d on\n",
		failed, gated, 100*float64(failed)/float64(gated), minChange, alpha, first+1)
	return nil
}
