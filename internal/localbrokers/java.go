package localbrokers

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/streambench/streambench-operator/api/v1alpha1"
	"github.com/streambench/streambench-operator/internal/javaruntime"
)

// javaKey is one java binary as found: the file PATH's java resolves to
// (Debian's /usr/bin/java is a chain of alternatives links) and its size
// and time, so a JDK switched or upgraded under a long suite is read anew.
type javaKey struct {
	path  string
	size  int64
	mtime time.Time
}

var javaCache = struct {
	sync.Mutex
	m map[javaKey]v1alpha1.JavaRuntime
}{m: map[javaKey]v1alpha1.JavaRuntime{}}

// BrokerJava is the Java runtime of the java StartJVM starts the brokers
// with (the first java on PATH), read once per binary: reading it starts a
// JVM (~0.3 s), and a suite starts many clusters on the same one.
func BrokerJava(ctx context.Context) (*v1alpha1.JavaRuntime, error) {
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, CheckJava()
	}
	key := javaKey{path: java}
	if real, err := filepath.EvalSymlinks(java); err == nil {
		key.path = real
	}
	if fi, err := os.Stat(key.path); err == nil {
		key.size, key.mtime = fi.Size(), fi.ModTime()
	}
	javaCache.Lock()
	rt, ok := javaCache.m[key]
	javaCache.Unlock()
	if ok {
		return &rt, nil
	}
	rt, err = javaruntime.Probe(ctx, java)
	if err != nil {
		return nil, err
	}
	javaCache.Lock()
	javaCache.m[key] = rt
	javaCache.Unlock()
	return &rt, nil
}

// readJava records the brokers' Java runtime in s. A runtime that cannot
// be read is said, not fatal: the brokers run all the same, and the
// results say it is unknown.
func (s *Setup) readJava(ctx context.Context, logf func(string, ...any)) {
	rt, err := BrokerJava(ctx)
	if err != nil {
		s.JavaError = err.Error()
		logf("the brokers' Java version could not be read: %v", err)
		return
	}
	s.Java = rt
	logf("brokers run on %s", javaruntime.String(rt))
}
