// Package syncdelay builds and configures an LD_PRELOAD shim (shim/syncdelay.c)
// that adds a known delay to every call that waits for data to reach the
// disk: fsync, fdatasync, msync(MS_SYNC), sync_file_range(WAIT_AFTER),
// syncfs and sync. A broker started with it acknowledges no faster than the
// delay exactly when it syncs before the acknowledgement, which is how the
// durability experiment (internal/lab/experiment) tells a local sync
// on the ack path from one that happens later, without trusting a document.
//
// The shim is compiled from source with the machine's C compiler on first
// use; nothing binary is committed.
package syncdelay

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

//go:embed shim/syncdelay.c
var source []byte

// Environment variables the shim reads.
const (
	EnvDelayMicros = "STREAMBENCH_SYNC_DELAY_US"
	EnvTrace       = "STREAMBENCH_SYNC_TRACE"
	EnvStallPath   = "STREAMBENCH_SYNC_STALL_PATH"
	EnvStallFlag   = "STREAMBENCH_SYNC_STALL_FLAG"
)

// Calls the shim delays, as they appear in a trace.
var Calls = []string{"fsync", "fdatasync", "msync", "sync_file_range", "syncfs", "sync"}

// Build compiles the shim into dir (created if missing) with $CC or cc and
// returns the shared library's path. The file name carries a hash of the
// source, so an edited shim is rebuilt and an unchanged one is reused.
func Build(ctx context.Context, dir string) (string, error) {
	sum := sha256.Sum256(source)
	lib := filepath.Join(dir, "syncdelay-"+hex.EncodeToString(sum[:6])+".so")
	if _, err := os.Stat(lib); err == nil {
		return lib, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	src := filepath.Join(dir, "syncdelay.c")
	if err := os.WriteFile(src, source, 0o644); err != nil {
		return "", err
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		return "", fmt.Errorf("syncdelay: no C compiler %q on PATH (%v); install one (e.g. apt-get install gcc) or set CC", cc, err)
	}
	// Build to a temporary name and rename, so a concurrent build or an
	// interrupted one never leaves a half-written library under the final name.
	tmp := lib + ".tmp" + strconv.Itoa(os.Getpid())
	cmd := exec.CommandContext(ctx, cc, "-shared", "-fPIC", "-O2", "-Wall", "-o", tmp, src, "-ldl")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("syncdelay: %s %s: %w\n%s", cc, strings.Join(cmd.Args[1:], " "), err, out)
	}
	return lib, os.Rename(tmp, lib)
}

// Env is the environment that loads lib into a process and delays each of
// its syncs by delay; trace, if not empty, is the file the shim appends one
// line per sync to (ReadTrace reads it).
func Env(lib string, delay time.Duration, trace string) []string {
	env := []string{
		"LD_PRELOAD=" + lib,
		EnvDelayMicros + "=" + strconv.FormatInt(delay.Microseconds(), 10),
	}
	if trace != "" {
		env = append(env, EnvTrace+"="+trace)
	}
	return env
}

// StallEnv is the environment that loads lib into a process with no delay
// and stalls its syncs of, and writes to, the files under path (a prefix
// of their paths) for as long as the file flag exists: Stall creates it,
// the returned function removes it. A call already stalled returns within
// a millisecond of the removal.
func StallEnv(lib, path, flag string) []string {
	return []string{"LD_PRELOAD=" + lib, EnvDelayMicros + "=0", EnvStallPath + "=" + path, EnvStallFlag + "=" + flag}
}

// Stall starts stalling the syncs and writes StallEnv selects, until the returned
// function is called.
func Stall(flag string) (release func() error, err error) {
	return StallPath(flag, "")
}

// StallPath is Stall of the files under path only (a prefix of their
// paths; "" is StallEnv's path), chosen now rather than when the process
// started: e.g. the bookie of a standalone that is in a ledger's ensemble.
//
// The flag appears with its content at once (written beside it and
// renamed): the shim reads an empty flag as the whole stall path, so a
// flag seen between its creation and its write stalled every bookie of a
// standalone for as long as the stall lasted. Calling it again while a
// stall lasts moves the stall to the new path.
func StallPath(flag, path string) (release func() error, err error) {
	tmp := flag + ".new"
	if err := os.WriteFile(tmp, []byte(path), 0o644); err != nil {
		return nil, fmt.Errorf("syncdelay: starting a stall: %w", err)
	}
	if err := os.Rename(tmp, flag); err != nil {
		_ = os.Remove(tmp)
		return nil, fmt.Errorf("syncdelay: starting a stall: %w", err)
	}
	return func() error {
		if err := os.Remove(flag); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("syncdelay: ending a stall: %w", err)
		}
		return nil
	}, nil
}

// Sync is one delayed call of a trace.
type Sync struct {
	// Call is the function: fsync, fdatasync, msync, ...
	Call string
	Pid  int
	// Start is when the real call began, End when the delay after it ended
	// (the broker could go on only then).
	Start, End time.Time
	// Path is the file synced, "-" for calls without a file descriptor
	// (msync, sync).
	Path string
}

// ReadTrace reads the calls recorded in a trace file, in the order they
// ended. A missing file is an empty trace: the shim creates it on the first
// sync.
func ReadTrace(path string) ([]Sync, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return ParseTrace(b)
}

// ParseTrace parses a trace's content, one "<call> <pid> <start ns> <end
// ns> <path>" line per call. A last line without its newline is a call
// still being written, and is left out.
func ParseTrace(b []byte) ([]Sync, error) {
	var out []Sync
	lines := bytes.Split(b, []byte("\n"))
	// The last piece follows the last newline: empty, or not complete yet.
	for n, line := range lines[:len(lines)-1] {
		f := strings.Fields(string(line))
		if len(f) == 0 {
			continue
		}
		if len(f) != 5 {
			return out, fmt.Errorf("syncdelay: trace line %d %q: want <call> <pid> <start> <end> <path>", n+1, line)
		}
		pid, err1 := strconv.Atoi(f[1])
		start, err2 := strconv.ParseInt(f[2], 10, 64)
		end, err3 := strconv.ParseInt(f[3], 10, 64)
		if err := errors.Join(err1, err2, err3); err != nil {
			return out, fmt.Errorf("syncdelay: trace line %d %q: %w", n+1, line, err)
		}
		out = append(out, Sync{Call: f[0], Pid: pid, Start: time.Unix(0, start), End: time.Unix(0, end), Path: f[4]})
	}
	return out, nil
}

// Count is the number of calls by call name.
func Count(syncs []Sync) map[string]int {
	n := map[string]int{}
	for _, s := range syncs {
		n[s.Call]++
	}
	return n
}

// Total is the number of syncs in counts.
func Total(counts map[string]int) int {
	t := 0
	for _, c := range counts {
		t += c
	}
	return t
}
