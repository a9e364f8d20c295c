package main

import (
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/streambench/streambench-operator/internal/archive"
	"github.com/streambench/streambench-operator/internal/changepoint"
	"github.com/streambench/streambench-operator/internal/history"
	"github.com/streambench/streambench-operator/internal/report"
	"github.com/streambench/streambench-operator/internal/results"
)

func init() { rootCmd.AddCommand(newHistoryCmd()) }

// defaultPValue is the significance of a change point and of a run's
// standing, history's --p-value and what report --history uses.
const defaultPValue = 0.01

func newHistoryCmd() *cobra.Command {
	var failOnRegression bool
	var minChange, pValue float64
	var page, linkBase string
	var arch archiveFlags
	cmd := &cobra.Command{
		Use:   "history <results dir | s3://bucket/prefix>",
		Short: "Group archived runs into series of one configuration, find where their figures changed and how the newest run stands",
		Long: `history reads every run's summary.json under a directory (each run's
results directory, as run --local writes them under results/; a repeated
run counts as its median, its repeats' own directories are passed over),
groups the runs into series of one configuration (system and version,
durability achieved, topology and envelopes, workload, client security,
testbed class: a changed setting starts another series), and prints, for
each series and figure (publish MB/s; publish p50, p99, p99.9; corrected
p99; end-to-end p50, p99, p99.9; broker CPU per 1000 msg/s), its newest
value and the runs where it changed: E-divisive means with a t-test
corrected for the splits searched (internal/changepoint), the change with
its 95 % interval and p-value. Then how the newest run of each series
stands against the series' last segment (the runs since the last change
point): the change against the segment's mean and whether it lies outside
the segment's spread, a prediction interval for one new run,
mean ± t(n−1, 1 − p/2) · s · √(1 + 1/n).

--fail-on-regression exits non-zero when, for a figure, the last change
point made it worse by at least --min-change (relative to the segment
before: the newest runs are in a worse segment), or the newest run lies
outside the last segment's spread on the worse side and by at least
--min-change (the first slow run, which no change point can show until 3
runs follow it). --p-value is then the whole gate's: each of a series'
figures is tested at --p-value over their count (Bonferroni), since each
at 0.01 alone failed 5 of 47 nights of one configuration on real
brokers.

--html writes a self-contained page (inline SVG, no script): a chart per
series and figure, the runs in order with change points marked, each
point linked to its run's report.html (or summary.json): relative to the
page for a directory, the object's URL at the endpoint for an s3://
archive (readable where the bucket is to the browser), or under
--link-base, the URL the archive is served at.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if strings.HasPrefix(dir, "s3://") {
				// An S3 archive is read into a temporary directory first,
				// in its own layout: what is read next is what a
				// directory archive holds.
				tmp, err := os.MkdirTemp("", "streambench-history-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(tmp)
				arch.to = dir
				store, err := arch.open(cmd.Context())
				if err != nil {
					return err
				}
				if _, err := archive.Fetch(cmd.Context(), store, "", tmp); err != nil {
					return fmt.Errorf("reading the archive %s: %w", dir, err)
				}
				dir = tmp
			}
			runs, err := archivedRuns(dir)
			if err != nil {
				return err
			}
			if len(runs) == 0 {
				return fmt.Errorf("%s holds no run's %s", args[0], results.KeySummary)
			}
			series := history.Analyze(history.Group(runs), changepoint.Options{PValue: pValue})
			var standings []history.Standings
			for _, s := range series {
				standings = append(standings, history.Newest(s, pValue))
			}
			writeHistory(cmd.OutOrStdout(), series, standings)
			if page != "" {
				link, err := runLink(args[0], page, linkBase, arch)
				if err != nil {
					return err
				}
				b, err := history.Page(series, standings, link)
				if err != nil {
					return err
				}
				if err := os.WriteFile(page, b, 0o644); err != nil {
					return fmt.Errorf("--html: %w", err)
				}
				fmt.Fprintln(cmd.OutOrStdout(), "page:", page)
			}
			fails := history.Gate(series, minChange, pValue)
			if failOnRegression {
				failed := map[string]int{}
				for _, f := range fails {
					failed[f.Series]++
				}
				for _, s := range series {
					verdict := "passed"
					if n := failed[s.Key]; n > 0 {
						verdict = fmt.Sprintf("failed on %d", n)
					}
					fmt.Fprintf(cmd.OutOrStdout(), "gate, series %s: each figure at p < %s (--p-value %g over %d figures), by %.0f %% or more: %s\n",
						s.Key, history.Number(history.FigureAlpha(s, pValue)), pValue, s.Recorded(), minChange*100, verdict)
				}
			}
			if failOnRegression && len(fails) > 0 {
				var b strings.Builder
				for _, f := range fails {
					b.WriteString("\n  " + f.String())
				}
				return fmt.Errorf("--fail-on-regression: %d figures regressed by %.0f %% or more:%s", len(fails), minChange*100, b.String())
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&arch.endpoint, "endpoint", "", "for an s3:// archive: the S3 API's URL (default $AWS_ENDPOINT_URL, else AWS's); credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	fl.StringVar(&arch.region, "region", "", "for an s3:// archive: the bucket's region (default $AWS_REGION, else us-east-1)")
	fl.BoolVar(&arch.pathStyle, "path-style", false, "for an s3:// archive: address the bucket in the URL's path")
	fl.BoolVar(&failOnRegression, "fail-on-regression", false, "exit non-zero when the newest runs of a series start a worse segment of a figure, or the newest run is worse than the series' spread")
	fl.Float64Var(&minChange, "min-change", 0.05, "the smallest relative change --fail-on-regression fails on (0.05 = 5 %)")
	fl.Float64Var(&pValue, "p-value", defaultPValue, "the significance threshold of a change point (over the splits its segment could have had) and of the newest run's standing (1 − the spread's coverage); for --fail-on-regression the whole gate's, each figure tested at it over their count")
	fl.StringVar(&page, "html", "", "also write the series as a self-contained HTML page to this file")
	fl.StringVar(&linkBase, "link-base", "", "with --html: the URL the archive is served at, which the page's links to each run start with (default: paths relative to the page for a directory, the objects' own URLs at the endpoint for s3://)")
	return cmd
}

// runLink links a run of the archive at arg to its report from the page
// at pagePath: the run's report.html when it has one, else its
// summary.json. Under base when given; else, for a directory, relative to
// the page so the archive and the page can move together, and for an S3
// archive the object's URL at the endpoint (the run's files were read
// into a temporary directory, which is gone when the page is opened).
func runLink(arg, pagePath, base string, arch archiveFlags) (func(history.Run) string, error) {
	file := func(r history.Run) string {
		if r.Report {
			return path.Join(filepath.ToSlash(r.Dir), report.FileName)
		}
		return path.Join(filepath.ToSlash(r.Dir), results.KeySummary)
	}
	if base == "" && strings.HasPrefix(arg, "s3://") {
		loc, err := archive.ParseLocation(arg)
		if err != nil {
			return nil, err
		}
		o := arch.options()
		if _, err := archive.ObjectURL(loc, o, ""); err != nil {
			return nil, fmt.Errorf("--html: %w", err)
		}
		return func(r history.Run) string {
			u, _ := archive.ObjectURL(loc, o, file(r))
			return u
		}, nil
	}
	if base != "" {
		u, err := url.Parse(base)
		if err != nil {
			return nil, fmt.Errorf("--link-base %q: %w", base, err)
		}
		return func(r history.Run) string {
			l := *u // a relative base stays relative
			l.Path = path.Join(u.Path, file(r))
			return l.String()
		}, nil
	}
	root, err := filepath.Abs(arg)
	if err != nil {
		return nil, err
	}
	pageDir, err := filepath.Abs(filepath.Dir(pagePath))
	if err != nil {
		return nil, err
	}
	return func(r history.Run) string {
		target := filepath.Join(root, filepath.FromSlash(file(r)))
		rel, err := filepath.Rel(pageDir, target)
		if err != nil {
			return (&url.URL{Scheme: "file", Path: filepath.ToSlash(target)}).String()
		}
		return filepath.ToSlash(rel)
	}, nil
}

// renderRun writes the report of the run in dir, with its standing
// against its series when hist names an archive (report --history).
func renderRun(dir, hist string) (string, error) {
	if hist == "" {
		return report.RenderDir(dir)
	}
	st, err := standingIn(dir, hist, defaultPValue)
	if err != nil {
		return "", err
	}
	return report.RenderDirWith(dir, report.Options{Against: st})
}

// standingIn is how the run in runDir stands against its series in the
// archive dir: the series the run is in, when the archive holds it, or
// the one it joins as its newest run.
func standingIn(runDir, dir string, pValue float64) (*history.Standings, error) {
	n, err := report.Load(runDir)
	if err != nil {
		return nil, err
	}
	runs, err := archivedRuns(dir)
	if err != nil {
		return nil, fmt.Errorf("--history: %w", err)
	}
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			return p
		}
		return a
	}
	var me *results.Summary
	for _, r := range runs {
		if abs(filepath.Join(dir, r.Dir)) == abs(runDir) {
			me = r.Summary
		}
	}
	if me == nil {
		me = n.Summary
		rel, _ := filepath.Rel(dir, runDir)
		runs = append(runs, history.Run{Name: n.Name, Dir: rel, Start: n.Summary.Start, Summary: me})
	}
	for _, s := range history.Analyze(history.Group(runs), changepoint.Options{PValue: pValue}) {
		for i, r := range s.Runs {
			if r.Summary == me {
				st := history.Stand(s, i, pValue)
				return &st, nil
			}
		}
	}
	return nil, fmt.Errorf("--history: the run in %s is in no series of %s", runDir, dir)
}

// archivedRuns reads every summary.json under dir but those of a repeated
// run's repeats (results.RepeatDir).
func archivedRuns(dir string) ([]history.Run, error) {
	var runs []history.Run
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != dir && strings.HasPrefix(d.Name(), "repeat-") {
			return filepath.SkipDir
		}
		if d.IsDir() || d.Name() != results.KeySummary {
			return nil
		}
		n, err := report.Load(filepath.Dir(path))
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, filepath.Dir(path))
		runs = append(runs, history.Run{Name: n.Name, Dir: rel, Start: n.Summary.Start, Summary: n.Summary,
			Report: isFile(filepath.Join(filepath.Dir(path), report.FileName))})
		return nil
	})
	return runs, err
}

// writeHistory prints each series: its configuration, its runs, each
// figure's newest value and change points, and how its newest run stands.
func writeHistory(w io.Writer, series []history.Series, standings []history.Standings) {
	for i, s := range series {
		fmt.Fprintf(w, "series %s: %s", s.Key, s.Config.Describe())
		first, last := s.Runs[0], s.Runs[len(s.Runs)-1]
		fmt.Fprintf(w, "\n  %d runs, %s (%s) to %s (%s)\n", len(s.Runs), first.Name, first.Start.UTC().Format("2006-01-02 15:04"), last.Name, last.Start.UTC().Format("2006-01-02 15:04"))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  figure\tnewest\tchange points")
		for _, t := range s.Tracks {
			if len(t.Values) == 0 {
				continue
			}
			var cps []string
			for _, ch := range t.Changes {
				verdict := "better"
				if ch.Worse {
					verdict = "WORSE"
				}
				cps = append(cps, fmt.Sprintf("run %d (%s): %+.1f %% (%.4g → %.4g, 95 %% interval %.3g..%.3g, p %.2g), %s",
					ch.Run+1, s.Runs[ch.Run].Name, ch.Relative*100, ch.Before, ch.After, ch.Low, ch.High, ch.PValue, verdict))
			}
			text := "none"
			if len(t.Values) < 6 {
				text = fmt.Sprintf("none: %d runs, a change needs 3 on each side", len(t.Values))
			}
			if len(cps) > 0 {
				text = strings.Join(cps, "; ")
			}
			fmt.Fprintf(tw, "  %s (%s)\t%.4g\t%s\n", t.Figure.Name, t.Figure.Unit, t.Values[len(t.Values)-1], text)
		}
		_ = tw.Flush()
		if i < len(standings) {
			st := standings[i]
			fmt.Fprintf(w, "  newest run %s against the series:\n", st.Name)
			for _, f := range st.Figures {
				fmt.Fprintf(w, "    %s\n", f)
			}
		}
		fmt.Fprintln(w)
	}
}
