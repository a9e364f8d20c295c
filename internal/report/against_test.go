package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/streambench/streambench-operator/internal/changepoint"
	"github.com/streambench/streambench-operator/internal/history"
	"github.com/streambench/streambench-operator/internal/results"
)

// nightlyRuns are n runs of the recorded Kafka run a day apart, the
// publish p99 of run i scaled by p99(i).
func nightlyRuns(t *testing.T, n int, p99 func(i int) float64) []history.Run {
	t.Helper()
	base := load(t, runFixed).Summary
	var runs []history.Run
	for i := range n {
		b, _ := json.Marshal(base)
		var s results.Summary
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		s.Run = fmt.Sprintf("nightly-%02d", i)
		s.Results.PublishLatencyMs.P99 *= p99(i)
		runs = append(runs, history.Run{Name: s.Run, Start: time.Date(2026, 11, 1+i, 2, 0, 0, 0, time.UTC), Summary: &s})
	}
	return runs
}

func TestAgainstItsSeries(t *testing.T) {
	steady := []float64{1, 1.02, 0.99}
	for _, c := range []struct {
		name string
		runs int
		p99  func(i int) float64
		// card is the card's value; lines what the section says.
		card  string
		bad   bool
		lines []string
	}{
		{"first run", 1, func(int) float64 { return 1 }, "first run", false,
			[]string{"The first run of its configuration"}},
		{"within", 4, func(i int) float64 { return steady[i%3] }, "within", false,
			[]string{"Run 4 of 4.", "publish p99 -0.3 % against the series' last segment of 3 runs: within the series' spread"}},
		{"a slow fourth", 4, func(i int) float64 {
			if i == 3 {
				return 3
			}
			return steady[i]
		}, "1 worse", true, []string{"Run 4 of 4.", "outside its spread (p", "): worse"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			runs := nightlyRuns(t, c.runs, c.p99)
			series := history.Analyze(history.Group(runs), changepoint.Options{})
			st := history.Newest(series[0], 0.01)
			var b bytes.Buffer
			if err := RenderWith(&b, runs[c.runs-1].Summary, nil, Options{Against: &st}); err != nil {
				t.Fatal(err)
			}
			doc, err := html.Parse(&b)
			if err != nil {
				t.Fatal(err)
			}
			var cardText, section string
			var find func(*html.Node)
			find = func(n *html.Node) {
				if n.Type == html.ElementNode {
					for _, a := range n.Attr {
						switch {
						case a.Key == "class" && (a.Val == "card" || a.Val == "card bad") && strings.Contains(textOf(n), "Against its series"):
							cardText = textOf(n)
							if strings.Contains(a.Val, "bad") != c.bad {
								t.Errorf("card %q has class %q, want bad %t", cardText, a.Val, c.bad)
							}
						case a.Key == "id" && a.Val == "against":
							section = textOf(n)
						}
					}
				}
				for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
					find(ch)
				}
			}
			find(doc)
			if !strings.Contains(cardText, c.card) || !strings.Contains(cardText, st.Series) {
				t.Errorf("card %q, want %q and the series key %s", cardText, c.card, st.Series)
			}
			for _, l := range append(c.lines, "Series "+st.Series) {
				if !strings.Contains(section, l) {
					t.Errorf("the section does not say %q:\n%s", l, section)
				}
			}
		})
	}
	// Without Options the report is as it was.
	var plain, with bytes.Buffer
	s := load(t, runFixed).Summary
	if err := Render(&plain, s, nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "Against its series") {
		t.Error("a report without --history has the card")
	}
	if err := RenderWith(&with, s, nil, Options{}); err != nil || !strings.Contains(with.String(), "Publish p99") {
		t.Errorf("RenderWith without options: %v", err)
	}
}
