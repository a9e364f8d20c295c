package brokerres

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"time"
)

// GCLogArg is the JVM option that makes a JVM log its collections to path
// with a wall-clock time on every line, which is what GCPauses reads. The
// unified logging's "gc" tag at info level logs one line per pause with
// its duration, for every collector.
func GCLogArg(path string) string { return "-Xlog:gc:file=" + path + ":time" }

// gcTimeLayout is the "time" decoration of the JVM's unified logging
// (ISO 8601 with milliseconds and a numeric zone, e.g.
// 2026-11-23T04:45:01.234+0000).
const gcTimeLayout = "2006-01-02T15:04:05.000-0700"

// GCPauses sums the pauses a GC log (GCLogArg) records as ending within
// [start, end]: the total in ms and their number.
func GCPauses(path string, start, end time.Time) (ms float64, n int64, err error) {
	fh, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		at, d, ok := parseGCPause(sc.Text())
		if !ok || at.Before(start) || at.After(end) {
			continue
		}
		ms += d
		n++
	}
	return ms, n, sc.Err()
}

// parseGCPause reads one line of a GC log, e.g.
//
//	[2026-11-23T04:45:01.234+0000] GC(3) Pause Young (Allocation Failure) 40M->10M(123M) 5.123ms
//
// The line is logged when the pause ends; lines that are not a pause
// (concurrent phases, heap summaries) are not.
func parseGCPause(line string) (at time.Time, ms float64, ok bool) {
	if !strings.HasPrefix(line, "[") {
		return at, 0, false
	}
	ts, rest, found := strings.Cut(line[1:], "]")
	if !found || !strings.Contains(rest, " Pause ") || !strings.HasSuffix(rest, "ms") {
		return at, 0, false
	}
	t, err := time.Parse(gcTimeLayout, ts)
	if err != nil {
		return at, 0, false
	}
	i := strings.LastIndexByte(rest, ' ')
	v, err := strconv.ParseFloat(strings.TrimSuffix(rest[i+1:], "ms"), 64)
	if err != nil {
		return at, 0, false
	}
	return t, v, true
}
