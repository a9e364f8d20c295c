package history

import (
	"fmt"
	"math"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/streambench/streambench-operator/internal/changepoint"

	"github.com/streambench/streambench-operator/internal/results"
	"github.com/streambench/streambench-operator/internal/significance"
)

// walk calls visit on every element of the tree under n.
func walk(n *html.Node, visit func(*html.Node)) {
	if n.Type == html.ElementNode {
		visit(n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, visit)
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func text(n *html.Node) string {
	var b strings.Builder
	var rec func(*html.Node)
	rec = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			rec(c)
		}
	}
	rec(n)
	return b.String()
}

func TestPage(t *testing.T) {
	// Kafka: twelve runs slower from the ninth, the newest repeated (an
	// interval of its median) and named to break out of its markup;
	// Pulsar: four steady runs.
	kafka := series(t, 12, func(i int, s *results.Summary) {
		s.Results.PublishLatencyMs.P99 *= wobble(i)
		if i >= 8 {
			s.Results.PublishLatencyMs.P99 *= 1.3
		}
		if i == 11 {
			s.Run = `</title><script>alert(1)</script>`
			p99 := s.Results.PublishLatencyMs.P99
			s.Intervals = []results.FigureInterval{{Figure: "publish p99 (ms)", Estimate: significance.Estimate{N: 5, Median: p99, Low: 0.9 * p99, High: 1.2 * p99, Confidence: 0.94}}}
		}
	})
	kafka.Runs[11].Name = kafka.Runs[11].Summary.Run
	pulsarRuns := nightly(t, "pulsar-ack-2", 4, wobble)
	pulsar := Analyze(Group(pulsarRuns), changepoint.Options{})[0]
	all := []Series{kafka, pulsar}
	standings := []Standings{Newest(kafka, 0.01), Newest(pulsar, 0.01)}
	link := func(r Run) string { return "../" + r.Dir + "/report.html?name=" + r.Name }
	page, err := Page(all, standings, link)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(strings.NewReader(string(page)))
	if err != nil {
		t.Fatal(err)
	}

	sections := map[string]*html.Node{}
	var scripts, external []string
	walk(doc, func(n *html.Node) {
		switch {
		case n.Data == "section":
			sections[attr(n, "id")] = n
		case n.Data == "script":
			scripts = append(scripts, text(n))
		case attr(n, "src") != "" || n.Data == "link" || strings.Contains(attr(n, "href"), "://"):
			external = append(external, n.Data)
		}
	})
	if len(scripts) > 0 || len(external) > 0 {
		t.Errorf("scripts %q, external references %q: the page must be self-contained, and a run's name text", scripts, external)
	}
	for _, s := range all {
		sec := sections["series-"+s.Key]
		if sec == nil {
			t.Fatalf("no section for series %s; sections %v", s.Key, sections)
		}
		if body := text(sec); !strings.Contains(body, "series "+s.Key) || !strings.Contains(body, s.Config.Describe()) {
			t.Errorf("series %s's section does not say its key and configuration:\n%s", s.Key, body)
		}
		figures := map[string]*html.Node{}
		walk(sec, func(n *html.Node) {
			if n.Data == "figure" {
				figures[attr(n, "id")] = n
			}
		})
		for _, tr := range s.Tracks {
			fig := figures[s.Key+"-"+slug(tr.Figure.Name)]
			if (fig != nil) != (len(tr.Values) > 0) {
				t.Errorf("series %s, %s: a chart %t, values %d", s.Key, tr.Figure.Name, fig != nil, len(tr.Values))
				continue
			}
			if fig == nil {
				continue
			}
			// Each point is a circle in a link to its run.
			var links []string
			walk(fig, func(n *html.Node) {
				if n.Data == "circle" && n.Parent.Data == "a" {
					links = append(links, attr(n.Parent, "href"))
				}
			})
			if len(links) != len(tr.Values) {
				t.Errorf("series %s, %s: %d linked points, want %d", s.Key, tr.Figure.Name, len(links), len(tr.Values))
			}
			for p, l := range links {
				// html/template escapes what a URL cannot hold.
				if r := s.Runs[tr.Runs[p]]; strings.ContainsAny(l, "<>") || unescape(t, l) != link(r) {
					t.Errorf("series %s, %s, run %d links %q", s.Key, tr.Figure.Name, tr.Runs[p]+1, l)
				}
			}
			body := text(fig)
			for _, ch := range tr.Changes {
				if label := fmt.Sprintf("%+.1f %% (%s)", ch.Relative*100, PValue(ch.PValue)); !strings.Contains(body, label) {
					t.Errorf("series %s, %s: the change point at run %d is not labelled %q:\n%s", s.Key, tr.Figure.Name, ch.Run+1, label, body)
				}
			}
			if !strings.Contains(body, "against the series' last segment of") {
				t.Errorf("series %s, %s: no standing under the chart:\n%s", s.Key, tr.Figure.Name, body)
			}
		}
	}

	// The slowdown is one change point of the Kafka p99, drawn, and the
	// newest run's bar spans its interval.
	var p99 *html.Node
	walk(sections["series-"+kafka.Key], func(n *html.Node) {
		if attr(n, "id") == kafka.Key+"-publish-p99" {
			p99 = n
		}
	})
	changes, bars, bands := 0, 0, 0
	walk(p99, func(n *html.Node) {
		switch {
		case n.Data == "rect" && attr(n, "class") == "band":
			bands++
		case n.Data == "line" && strings.HasPrefix(attr(n, "class"), "change"):
			changes++
		case n.Data == "line" && attr(n, "class") == "bar":
			bars++
		}
	})
	if changes != 1 || bars != 1 || bands != 1 {
		t.Errorf("publish p99: %d change lines, %d bars, %d bands; want the slowdown's, the repeated run's and the newest run's spread", changes, bars, bands)
	}
	if body := text(p99); !strings.Contains(body, "</title><script>alert(1)</script>") {
		t.Errorf("the run's name is not shown as text:\n%s", body)
	}
	if strings.Contains(string(page), "<script>") {
		t.Error("the run's name reached the page unescaped")
	}
}

func unescape(t *testing.T, u string) string {
	t.Helper()
	s, err := url.PathUnescape(u)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSpread(t *testing.T) {
	s := recorded(t, "kafka-ack-all")
	if _, _, ok := p99Figure.Spread(s); ok {
		t.Error("a run not repeated has a spread")
	}
	rep := *s
	for i, f := range []float64{1, 1.2, 0.9} {
		r := results.Repeat{Index: i + 1, Results: s.Results}
		r.Results.PublishLatencyMs.P99 *= f
		rep.Repeats = append(rep.Repeats, r)
	}
	p99 := s.Results.PublishLatencyMs.P99
	if lo, hi, ok := p99Figure.Spread(&rep); !ok || math.Abs(lo-0.9*p99) > 1e-9 || math.Abs(hi-1.2*p99) > 1e-9 {
		t.Errorf("repeats' spread %g..%g (%t), want their lowest and highest", lo, hi, ok)
	}
	rep.Intervals = []results.FigureInterval{{Figure: "publish p99 (ms)", Estimate: significance.Estimate{Low: 1, High: 2}}}
	if lo, hi, _ := p99Figure.Spread(&rep); lo != 1 || hi != 2 {
		t.Errorf("spread %g..%g, want the summary's interval of the median", lo, hi)
	}
}

func TestTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{
		{0.05, 1.02, "[0.2 0.4 0.6 0.8 1]"},
		{3.9, 5.3, "[4 4.5 5]"},
		{96, 104, "[96 98 100 102 104]"},
	} {
		if got := fmt.Sprint(ticks(c.lo, c.hi)); got != c.want {
			t.Errorf("ticks(%g, %g) = %s, want %s", c.lo, c.hi, got, c.want)
		}
	}
}
