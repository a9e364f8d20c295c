// Command falsepositives checks compare's false-positive rate on real
// repeats of one configuration: it splits a repeated run's repeats (or
// several runs') into disjoint blocks of 2k consecutive repeats, labels
// each block's repeats A B B A A B B A … (the interleaving a suite uses, so
// a drift of the machine weighs on both sides alike), and asks compare's
// test (internal/significance, as `streambench compare` does) whether B
// differs from A in each tested figure. The repeats are all of one
// configuration, so every "different" is a false positive; the test's
// exact coverage (96.8 % for 5 against 5) bounds their expected share at
// 3.2 % per figure. hack/bench-falsepositives makes the repeats.
//
// With -gate it checks the nightly gate instead (streambench history
// --fail-on-regression, issue 61): each repeat is a night of a series, and
// from the fourth night on the gate judges each against the nights before
// it (gate.go). Every failed night is a false alarm.
//
//	go run ./hack/falsepositives [-k 5] RESULTS_DIR...
//	go run ./hack/falsepositives -gate [-min-change 0.10] [-p-value 0.01] RESULTS_DIR...
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/significance"
)

func main() {
	k := flag.Int("k", 5, "repeats on each side of a trial")
	gate := flag.Bool("gate", false, "test the nightly gate (streambench history --fail-on-regression) in place of compare: each repeat a night")
	minChange := flag.Float64("min-change", 0.10, "with -gate: the gate's --min-change (config/samples/nightly's)")
	alpha := flag.Float64("p-value", 0.01, "with -gate: the gate's --p-value")
	first := flag.Int("from", 3, "with -gate: the first night judged has this many before it")
	step := flag.Float64("step", 0, "with -gate: also plant a slowdown (every latency figure times this, e.g. 1.25) in the second half of series of -nights nights, for the change points' and the gate's power")
	length := flag.Int("nights", 10, "with -gate -step: the length of each planted series")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: falsepositives [-k 5 | -gate] RESULTS_DIR... (each a repeated run's directory: summary.json with repeats)")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 || *k < 2 {
		flag.Usage()
		os.Exit(2)
	}
	var err error
	if *gate {
		err = runGate(os.Stdout, flag.Args(), *minChange, *alpha, *first)
		if err == nil {
			fmt.Println()
			err = runChangePoints(os.Stdout, flag.Args(), *alpha, *minChange, *step, *length)
		}
	} else {
		err = run(os.Stdout, *k, flag.Args())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "falsepositives:", err)
		os.Exit(1)
	}
}

// block is one trial: the indexes of its A and B repeats.
type block struct{ a, b []int }

// trials splits n repeats into disjoint blocks of 2k consecutive ones,
// labelled A B B A A B B A … within each; a remainder shorter than 2k is
// left out.
func trials(n, k int) []block {
	var out []block
	for start := 0; start+2*k <= n; start += 2 * k {
		var b block
		for i := range 2 * k {
			// A B, B A, A B …: pairs alternate which comes first.
			if (i%2 == 0) == ((i/2)%2 == 0) {
				b.a = append(b.a, start+i)
			} else {
				b.b = append(b.b, start+i)
			}
		}
		out = append(out, b)
	}
	return out
}

func run(w io.Writer, k int, dirs []string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "run\ttrial\trepeats\tfigure\tB/A\tinterval\tp\tverdict")
	tests, different := 0, 0
	perFigure := map[string][2]int{}
	var order []string
	for _, dir := range dirs {
		sum, err := readSummary(filepath.Join(dir, results.KeySummary))
		if err != nil {
			return err
		}
		if len(sum.Repeats) < 2*k {
			return fmt.Errorf("%s: %d repeats, fewer than the %d one trial needs", dir, len(sum.Repeats), 2*k)
		}
		for t, b := range trials(len(sum.Repeats), k) {
			for _, f := range results.Figures {
				if !f.Tested {
					continue
				}
				va, vb := values(sum, f, b.a), values(sum, f, b.b)
				if len(va) < k || len(vb) < k {
					continue // a figure some repeat lacks (no consumers)
				}
				v, err := significance.Compare(f.Name, f.Better, va, vb, 0)
				if err != nil {
					return err
				}
				if v.Outcome == significance.CannotTell {
					continue
				}
				tests++
				c, seen := perFigure[f.Name]
				if !seen {
					order = append(order, f.Name)
				}
				c[0]++
				if v.Outcome == significance.Different {
					different++
					c[1]++
				}
				perFigure[f.Name] = c
				fmt.Fprintf(tw, "%s\t%d\t%d-%d\t%s\t%.3f\t%.3f-%.3f\t%.4f\t%s\n", filepath.Base(dir), t+1, b.a[0]+1, b.a[0]+2*k, f.Name, v.Ratio, v.Low, v.High, v.P, v.Outcome)
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if tests == 0 {
		return fmt.Errorf("no figure could be tested")
	}
	fmt.Fprintf(w, "\nper figure (said different / tested):\n")
	for _, name := range order {
		c := perFigure[name]
		fmt.Fprintf(w, "  %-28s %d / %d\n", name, c[1], c[0])
	}
	fmt.Fprintf(w, "\n%d of %d tests of one configuration against itself said different (%.1f %%); the test's exact coverage bounds the expected share at %.1f %% for %d against %d\n",
		different, tests, 100*float64(different)/float64(tests), 100*(1-coverage(k)), k, k)
	return nil
}

// coverage is the exact coverage of compare's interval for k against k.
func coverage(k int) float64 {
	a := make([]float64, k)
	b := make([]float64, k)
	for i := range a {
		a[i], b[i] = float64(i+1), float64(i+1)+0.5
	}
	v, err := significance.Compare("", significance.LowerIsBetter, a, b, 0)
	if err != nil {
		return 0
	}
	return v.Confidence
}

func values(s *results.Summary, f results.Figure, idx []int) []float64 {
	var out []float64
	for _, i := range idx {
		if v, ok := f.Of(s.Repeats[i].Results); ok {
			out = append(out, v)
		}
	}
	return out
}

func readSummary(path string) (*results.Summary, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s results.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &s, nil
}
