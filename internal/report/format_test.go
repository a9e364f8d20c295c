package report

import (
	"math"
	"testing"
)

func TestFormats(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{ms(15.287), "15.29"}, {ms(164.2), "164.20"}, {ms(1699.839), "1700"}, {ms(23456.4), "23,456"}, {ms(math.NaN()), "–"},
		{count(420143), "420,143"}, {count(-1234567), "-1,234,567"}, {count(7), "7"},
		{mbps(4.1038), "4.10"}, {mbps(204.8), "204.8"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
