package dashboards

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// CheckPromQL parses expr as PromQL (the subset dashboards use: selectors
// with matchers, range vectors, functions, aggregations with by/without,
// binary operators with on/ignoring/group_left/bool, numbers) and returns
// the metric names it selects. Grafana's $__rate_interval and
// label_values(selector, label) are understood. The Prometheus module's
// own parser would pull a newer client_golang, prometheus/common and
// OpenTelemetry into this module's build, so this is a small parser of
// its own; its tests hold expressions it must refuse.
func CheckPromQL(expr string) ([]string, error) {
	p := &parser{src: strings.ReplaceAll(expr, "$__rate_interval", "1m")}
	if err := p.tokenize(); err != nil {
		return nil, err
	}
	if err := p.expr(); err != nil {
		return nil, err
	}
	if p.pos != len(p.toks) {
		return nil, fmt.Errorf("unexpected %q after the expression", p.toks[p.pos].text)
	}
	return p.metrics, nil
}

type tokKind int

const (
	tIdent tokKind = iota
	tNumber
	tDuration
	tString
	tOp
	tPunct
)

type token struct {
	kind tokKind
	text string
}

type parser struct {
	src     string
	toks    []token
	pos     int
	metrics []string
}

var (
	reDuration = regexp.MustCompile(`^([0-9]+(ms|s|m|h|d|w|y))+`)
	reNumber   = regexp.MustCompile(`^([0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?)`)
	reIdent    = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*`)
	ops        = []string{"==", "!=", ">=", "<=", "=~", "!~", "+", "-", "*", "/", "%", "^", ">", "<", "="}
)

func (p *parser) tokenize() error {
	s := p.src
	for len(s) > 0 {
		r := rune(s[0])
		switch {
		case unicode.IsSpace(r):
			s = s[1:]
		case r == '"':
			i := 1
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
			if i >= len(s) {
				return fmt.Errorf("unterminated string in %q", p.src)
			}
			p.toks = append(p.toks, token{tString, s[1:i]})
			s = s[i+1:]
		case strings.ContainsRune("(){}[],", r):
			p.toks = append(p.toks, token{tPunct, s[:1]})
			s = s[1:]
		case reDuration.MatchString(s):
			m := reDuration.FindString(s)
			p.toks = append(p.toks, token{tDuration, m})
			s = s[len(m):]
		case reNumber.MatchString(s):
			m := reNumber.FindString(s)
			p.toks = append(p.toks, token{tNumber, m})
			s = s[len(m):]
		case reIdent.MatchString(s):
			m := reIdent.FindString(s)
			p.toks = append(p.toks, token{tIdent, m})
			s = s[len(m):]
		default:
			found := false
			for _, o := range ops {
				if strings.HasPrefix(s, o) {
					p.toks = append(p.toks, token{tOp, o})
					s = s[len(o):]
					found = true
					break
				}
			}
			if !found {
				return fmt.Errorf("unexpected character %q in %q", r, p.src)
			}
		}
	}
	return nil
}

func (p *parser) peek() token {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return token{kind: -1}
}

func (p *parser) accept(kind tokKind, text string) bool {
	if t := p.peek(); t.kind == kind && t.text == text {
		p.pos++
		return true
	}
	return false
}

func (p *parser) expect(kind tokKind, text string) error {
	if !p.accept(kind, text) {
		return fmt.Errorf("want %q, got %q in %q", text, p.peek().text, p.src)
	}
	return nil
}

var (
	functions = map[string]bool{
		"rate": true, "irate": true, "increase": true, "delta": true, "idelta": true, "deriv": true,
		"histogram_quantile": true, "abs": true, "clamp_min": true, "clamp_max": true, "label_replace": true,
		"avg_over_time": true, "max_over_time": true, "min_over_time": true, "sum_over_time": true, "vector": true, "time": true,
	}
	aggregations = map[string]bool{"sum": true, "max": true, "min": true, "avg": true, "count": true, "stddev": true, "topk": true, "bottomk": true, "quantile": true, "group": true}
	binaryWords  = map[string]bool{"and": true, "or": true, "unless": true}
	keywords     = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true, "bool": true, "offset": true}
)

func (p *parser) expr() error {
	if err := p.unary(); err != nil {
		return err
	}
	for {
		t := p.peek()
		isOp := t.kind == tOp && t.text != "=" && t.text != "=~" && t.text != "!~"
		if !isOp && !(t.kind == tIdent && binaryWords[t.text]) {
			return nil
		}
		p.pos++
		p.accept(tIdent, "bool")
		for _, kw := range []string{"on", "ignoring", "group_left", "group_right"} {
			if p.accept(tIdent, kw) && p.peek().text == "(" {
				if err := p.labelList(); err != nil {
					return err
				}
			}
		}
		if err := p.unary(); err != nil {
			return err
		}
	}
}

func (p *parser) unary() error {
	if p.accept(tOp, "-") || p.accept(tOp, "+") {
		return p.unary()
	}
	return p.primary()
}

func (p *parser) labelList() error {
	if err := p.expect(tPunct, "("); err != nil {
		return err
	}
	for !p.accept(tPunct, ")") {
		if t := p.peek(); t.kind != tIdent {
			return fmt.Errorf("want a label name, got %q in %q", t.text, p.src)
		}
		p.pos++
		if !p.accept(tPunct, ",") && p.peek().text != ")" {
			return fmt.Errorf("want , or ) in a label list of %q", p.src)
		}
	}
	return nil
}

func (p *parser) args() error {
	if err := p.expect(tPunct, "("); err != nil {
		return err
	}
	if p.accept(tPunct, ")") {
		return nil
	}
	for {
		if t := p.peek(); t.kind == tString {
			p.pos++ // label_replace's string arguments
		} else if err := p.expr(); err != nil {
			return err
		}
		if p.accept(tPunct, ")") {
			return nil
		}
		if err := p.expect(tPunct, ","); err != nil {
			return err
		}
	}
}

func (p *parser) primary() error {
	t := p.peek()
	switch {
	case t.kind == tNumber:
		p.pos++
		return nil
	case t.kind == tPunct && t.text == "(":
		p.pos++
		if err := p.expr(); err != nil {
			return err
		}
		return p.expect(tPunct, ")")
	case t.kind == tPunct && t.text == "{":
		return p.selector("")
	case t.kind == tIdent && t.text == "label_values":
		// Grafana's variable query: label_values([selector,] label).
		p.pos++
		if err := p.expect(tPunct, "("); err != nil {
			return err
		}
		if p.toks[p.pos+1].text != ")" {
			if err := p.primary(); err != nil {
				return err
			}
			if err := p.expect(tPunct, ","); err != nil {
				return err
			}
		}
		if p.peek().kind != tIdent {
			return fmt.Errorf("label_values wants a label name last in %q", p.src)
		}
		p.pos++
		return p.expect(tPunct, ")")
	case t.kind == tIdent && aggregations[t.text]:
		p.pos++
		grouped := false
		if p.accept(tIdent, "by") || p.accept(tIdent, "without") {
			if err := p.labelList(); err != nil {
				return err
			}
			grouped = true
		}
		if err := p.args(); err != nil {
			return err
		}
		if !grouped && (p.accept(tIdent, "by") || p.accept(tIdent, "without")) {
			return p.labelList()
		}
		return nil
	case t.kind == tIdent && functions[t.text]:
		p.pos++
		return p.args()
	case t.kind == tIdent && !keywords[t.text] && !binaryWords[t.text]:
		if p.pos+1 < len(p.toks) && p.toks[p.pos+1].text == "(" {
			return fmt.Errorf("unknown function %q in %q", t.text, p.src)
		}
		p.pos++
		return p.selector(t.text)
	}
	return fmt.Errorf("unexpected %q in %q", t.text, p.src)
}

// selector reads matchers and a range after a metric name (or none).
func (p *parser) selector(metric string) error {
	if metric != "" {
		p.metrics = append(p.metrics, metric)
	}
	if p.accept(tPunct, "{") {
		if metric == "" && p.peek().text == "}" {
			return fmt.Errorf("empty selector in %q", p.src)
		}
		for !p.accept(tPunct, "}") {
			name := p.peek()
			if name.kind != tIdent {
				return fmt.Errorf("want a label name in a matcher, got %q in %q", name.text, p.src)
			}
			p.pos++
			op := p.peek()
			if op.kind != tOp || (op.text != "=" && op.text != "!=" && op.text != "=~" && op.text != "!~") {
				return fmt.Errorf("want =, !=, =~ or !~ after label %s in %q", name.text, p.src)
			}
			p.pos++
			val := p.peek()
			if val.kind != tString {
				return fmt.Errorf("want a string after %s%s in %q", name.text, op.text, p.src)
			}
			if op.text == "=~" || op.text == "!~" {
				re := strings.NewReplacer("$namespace", "ns", "$pod", "pod", "$run", "run").Replace(val.text)
				if _, err := regexp.Compile("^(?:" + re + ")$"); err != nil {
					return fmt.Errorf("matcher %s%s%q: %v", name.text, op.text, val.text, err)
				}
			}
			p.pos++
			if !p.accept(tPunct, ",") && p.peek().text != "}" {
				return fmt.Errorf("want , or } after a matcher in %q", p.src)
			}
		}
	} else if metric == "" {
		return fmt.Errorf("empty selector in %q", p.src)
	}
	if p.accept(tPunct, "[") {
		if p.peek().kind != tDuration {
			return fmt.Errorf("want a duration in [], got %q in %q", p.peek().text, p.src)
		}
		p.pos++
		return p.expect(tPunct, "]")
	}
	return nil
}
