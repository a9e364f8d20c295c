package report

import (
	"fmt"
	"math"
	"strings"
	"time"
)

func minutes(m float64) string {
	d := time.Duration(m * float64(time.Minute)).Round(time.Second)
	return fmt.Sprintf("%g min (%s)", m, d)
}

func nonEmpty(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// ms formats a latency in milliseconds as the source studies' tables do (two
// decimals), with fewer digits for large values.
func ms(v float64) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case v >= 10000:
		return count(int64(math.Round(v)))
	case v >= 1000:
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func mbps(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// count formats an integer with thousands separators.
func count(n int64) string {
	if n < 0 {
		return "-" + count(-n)
	}
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
