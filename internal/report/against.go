package report

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/streambench/streambench-operator/internal/history"
	"github.com/streambench/streambench-operator/internal/results"
)

// Options are what a report shows beyond the run's own results.
type Options struct {
	// Against is how the run stands against the other runs of its
	// configuration (streambench report --history); nil leaves the card
	// and its section out.
	Against *history.Standings
}

// RenderWith is Render with what o adds.
func RenderWith(w io.Writer, s *results.Summary, omb *results.OMBResult, o Options) error {
	if s == nil {
		return errors.New("report: no summary to render")
	}
	pg, err := buildPage(s, omb)
	if err != nil {
		return err
	}
	if a := o.Against; a != nil {
		pg.Against = againstOf(a)
		pg.Cards = append(pg.Cards, pg.Against.card())
	}
	return reportTmpl.Execute(w, pg)
}

// RenderDirWith is RenderDir with what o adds.
func RenderDirWith(dir string, o Options) (string, error) {
	n, err := Load(dir)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, FileName)
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	if err := RenderWith(f, n.Summary, n.OMB, o); err != nil {
		_ = f.Close()
		return "", err
	}
	return path, f.Close()
}

// againstView is the report's section "Against its series": which series,
// the run's place in it, and each figure's standing.
type againstView struct {
	Series, Config string
	Run, Runs      int
	Alpha          float64
	// First: no other run of the configuration is in the archive.
	First bool
	Lines []kv
	// Worse and Better count the figures outside the series' spread.
	Worse, Better int
}

func againstOf(st *history.Standings) *againstView {
	v := &againstView{Series: st.Series, Config: st.Config.Describe(), Run: st.Run + 1, Runs: st.Runs, Alpha: st.Alpha, First: st.Runs <= 1}
	for _, f := range st.Figures {
		v.Lines = append(v.Lines, kv{Key: f.Figure.Name, Value: f.String(), Bad: f.Verdict == history.Worse})
		switch f.Verdict {
		case history.Worse:
			v.Worse++
		case history.Better:
			v.Better++
		}
	}
	return v
}

// card sums the standings up among the headline's cards; the section
// under them has each figure's.
func (v *againstView) card() card {
	c := card{Label: "Against its series", Sub: fmt.Sprintf("series %s, run %d of %d", v.Series, v.Run, v.Runs)}
	switch {
	case v.First:
		c.Value, c.Sub = "first run", "of its configuration · series "+v.Series
	case v.Worse > 0:
		c.Value, c.Bad = fmt.Sprintf("%d worse", v.Worse), true
	case v.Better > 0:
		c.Value = fmt.Sprintf("%d better", v.Better)
	default:
		c.Value = "within"
		c.Sub += " · within its spread"
	}
	return c
}
