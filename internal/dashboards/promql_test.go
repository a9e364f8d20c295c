package dashboards

import (
	"reflect"
	"testing"
)

func TestCheckPromQL(t *testing.T) {
	for _, tc := range []struct {
		expr    string
		metrics []string
		bad     bool
	}{
		{`sum by (pod) (rate(a_total{namespace=~"$namespace",pod=~"$pod",container!=""}[$__rate_interval])) / 1e6`, []string{"a_total"}, false},
		{`histogram_quantile(0.99, sum by (le) (rate(h_bucket{run=~"$run"}[1m])))`, []string{"h_bucket"}, false},
		{`rate(x[1m]) / rate(y[1m])`, []string{"x", "y"}, false},
		{`-sum(rate(x{a="b"}[5m]))`, []string{"x"}, false},
		{`max by (phase) (p{run=~"$run"})`, []string{"p"}, false},
		{`sum(x) by (pod)`, []string{"x"}, false},
		{`label_values(m{namespace=~"$namespace"}, pod)`, []string{"m"}, false},
		{`a or on (pod) b`, []string{"a", "b"}, false},
		{`sum(rate(x[1m])`, nil, true},               // unbalanced
		{`rat(x[1m])`, nil, true},                    // unknown function
		{`x{a=b}`, nil, true},                        // matcher value not a string
		{`x{a=~"("}`, nil, true},                     // bad regexp
		{`rate(x[1 m])`, nil, true},                  // not a duration
		{`sum by pod (x)`, nil, true},                // label list without parentheses
		{`x +`, nil, true},                           // dangling operator
		{`x y`, nil, true},                           // two selectors
		{`{}`, nil, true},                            // empty selector
		{`histogram_quantile(0.99, x) x`, nil, true}, // trailing
	} {
		got, err := CheckPromQL(tc.expr)
		if tc.bad {
			if err == nil {
				t.Errorf("%s: parsed, want an error", tc.expr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.metrics) {
			t.Errorf("%s: %v, %v; want %v", tc.expr, got, err, tc.metrics)
		}
	}
}
